"""The faster ways the name finder scans an abstract find exactly what the patterns they stand
for find: a paper's name and title are identity inputs, so parsing faster must change nothing."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from rlpapers.parse import names
from rlpapers.parse.cues import CUE, cue_matches

# Words the cue pattern is made of, in several cases, with the look-alikes that must not fool
# the faster scan (a word inside a longer one, letters that ignore-case matching treats as
# ASCII: dotless i, long s, the Kelvin sign, a capital I with a dot that lower-cases to two).
_WORDS = [
    "we", "We", "WE", "our", "Our", "OUR", "the", "The", "THE", "this", "This", "paper",
    "Paper", "work", "framework", "study", "article", "report", "proposed", "propose",
    "proposes", "Proposing", "present", "represent", "presents", "introduce", "introducing",
    "develop", "design", "building", "called", "dubbed", "named", "renamed", "termed", "coined",
    "namely", "known", "unknown", "as", "referred", "to", "which", "and", "then", "resulting",
    "final", "method", "model", "short", "first", "also", "call", "it", "QeRL", "PCL", "X1",
    "a", "new", "propo\u017fing", "wh\u0131ch we", "\u0131ntroducing", "\u212aNOWN", "\u0130t", "é",
    "_x", "9", "this paper", "This short work", "the study", "our paper", "the proposed",
    "The resulting", "the final", ", propose", "and present", "then develop", "which we",
]  # fmt: skip
_GAPS = [" ", " ", " ", "  ", "\t", "\n", ", ", ",", "", "-", "\xa0", ". ", ": ", "(", ")"]
_TEXTS = st.lists(st.tuples(st.sampled_from(_WORDS), st.sampled_from(_GAPS)), max_size=40).map(
    lambda pairs: "".join(word + gap for word, gap in pairs)
)


def _spans(matches):
    return [m.span() for m in matches]


@settings(max_examples=600, deadline=None)
@given(_TEXTS)
def test_cue_matches_finds_what_the_pattern_finds(text):
    cue_matches.cache_clear()
    assert _spans(cue_matches(text)) == _spans(CUE.finditer(text))


def test_cue_matches_on_written_cases():
    cases = [
        "In this short paper we present QeRL, a method. The proposed PCL works.",
        "Our work, then propose X1 and develop Y2; the resulting model is called Z3.",
        "THIS PAPER PROPOSES QERL. ſo we propoſe X1 (dotless: by ıntroducing X).",
        "İstanbul: we introduce IBench, known as IB, which we call IBX.",
        "the\tfinal\nframework named\xa0Foo, referred to as Bar",
        "This paper presents A1. THIS SHORT WORK introduces B2, and present C3.",
    ]
    for text in cases:
        assert _spans(cue_matches(text)) == _spans(CUE.finditer(text)), text
    assert len(cue_matches(cases[0])) == 2  # "we present", "The proposed"


_SENTENCES = st.lists(
    st.tuples(
        st.sampled_from(["QeRL", "PCL", "the model", "Bench3D", "x", "IatroBench", "e.g"]),
        st.sampled_from([" is a ", " is an ", " measures ", " (a short aside) tests ", " was "]),
        st.sampled_from(["tool", "gap", "x", ""]),
        st.sampled_from([". ", "! ", "? ", ".", ". \n", ", ", " "]),
    ),
    max_size=12,
).map(lambda parts: "".join("".join(part) for part in parts))


@settings(max_examples=400, deadline=None)
@given(_SENTENCES)
def test_sentence_patterns_tried_at_sentence_starts_find_what_finditer_finds(text):
    starts = names._sentence_starts(text)
    for pattern in (names._SUBJECT, names._ACTING_SUBJECT):
        assert _spans(names._matches_at(pattern, text, starts)) == _spans(pattern.finditer(text))


def test_every_appositive_holds_the_hint():
    hint = names._APPOSITIVE_HINT.pattern
    assert hint in names._APPOSITIVE.pattern.replace(r"(?:a|an)\s+", r"an?\s")
    text = "It motivates Edit-As-Act, a framework that acts, an agent."
    assert names._APPOSITIVE.search(text) and names._APPOSITIVE_HINT.search(text)
    assert re.search(hint, "Edit-As-Act,  an\tx")


def test_the_aside_is_removed_only_where_it_can_stand():
    from rlpapers.parse.titles import _ASIDE, _phrase

    for text in (
        "To the best of our \u212anowledge, we propose a tool.",
        "We, to our knowledge, propose X.",
    ):
        assert _ASIDE.search(text) and "knowledge" in text.lower()
    assert _phrase("To the best of our knowledge, we propose a new tool for agents.") == _phrase(
        "We propose a new tool for agents."
    )


_LINE_WORDS = st.lists(
    st.sampled_from(
        ["off-policy", "Rein-", "forcement", "gpt4-turbo", "a--b", "-x", "y-", "²nd", "naïve",
         "Ǆemal", "x_y", "3D", "é-è", "word.", "(word)", "İ", "ſ", "\u00a0", "\t", "\n", " ", "  "]
    ),
    max_size=60,
).map("".join)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(_LINE_WORDS)
def test_the_mending_vocabulary_is_the_words_the_pattern_finds(text):
    from rlpapers.parse.blocks import _WORD, vocabulary

    assert vocabulary(text) == set(_WORD.findall(text.lower()))


_APPOSITIONS = st.lists(
    st.sampled_from(
        ["Edit-As-Act", "QeRL", "x", "-bad", "é2", "a_b", "_Z9", "3D", ",", ", a", ", an", " a ",
         " new", " simple", " framework", " model", " that", " deep", " network.", " ", "  ", "\t",
         "(", ")", "-", "frameworks"]
    ),
    max_size=40,
).map("".join)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(_APPOSITIONS)
def test_appositives_tried_where_they_can_begin_find_what_finditer_finds(text):
    found = names._matches_at(names._APPOSITIVE, text, names._appositive_starts(text))
    assert _spans(found) == _spans(names._APPOSITIVE.finditer(text))


def test_appositives_on_written_cases():
    cases = [
        "It motivates Edit-As-Act, a framework that acts.",
        "We use x-QeRL, an agent, and -bad, a model; é2, a new deep network.",
        "A_b, a simple framework, Z9, an  \tRL  toolkit suite.",
    ]
    for text in cases:
        found = names._matches_at(names._APPOSITIVE, text, names._appositive_starts(text))
        assert _spans(found) == _spans(names._APPOSITIVE.finditer(text)), text
        assert found, text
