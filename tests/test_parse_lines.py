"""Author lines of big-team papers and category lines with other separators (issue 27).

Real papers have author lines of thousands of names (3,303 for one in the arXiv sample), group
prefixes (``NVIDIA, :``) and category lines joined by `` - ``, ``;``, ``|`` or ``/``. The lines
here are generated or quoted from that sample; none of these tests reads the shared corpus.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlpapers.errors import ParseWarning
from rlpapers.parse import parse_text
from rlpapers.parse.roles import Role, classify, forget

from .test_parse_roles import ABSTRACT, OTHER, parse_quietly


def seed(*papers: tuple[str, ...]) -> str:
    """A file in the seed layout: a header, then per paper its blocks."""
    return "arXiv cs 2025-03\n\n" + "\n\n".join("\n\n".join(p) for p in papers) + "\n"


def names(count: int) -> list[str]:
    """``count`` distinct names (up to 5,200) as long as real ones: ``Chen K. Volkov``."""
    given = [
        "Aaron",
        "Beatriz",
        "Chen",
        "Dmitri",
        "Elif",
        "Fatima",
        "Gustavo",
        "Hiroshi",
        "Ines",
        "Jo",
    ]
    surnames = "Blakeman Ferreira Zhang Volkov Yilmaz Okafor Lindqvist Nakamura Dubois Kowalski"
    surnames += " Haddad Moreau Singh Novak Ivanova Rossi Schmidt Tanaka Oliveira Nguyen"
    return [
        f"{given[i % 10]} {chr(65 + i // 10 % 26)}. {surnames.split()[i // 260]}"
        for i in range(count)
    ]


# --- author lines of any length -----------------------------------------------------------------

BIG = names(3_000)


@pytest.mark.parametrize("categories", [True, False], ids=["after categories", "alone"])
def test_a_3000_name_author_line_is_an_author_line(categories):
    line = ", ".join(BIG)
    assert len(line) > 40_000
    first = seed(("cs.CL · cs.AI", line, ABSTRACT) if categories else (line, ABSTRACT))
    (paper,) = parse_quietly(first)
    assert paper.authors == tuple(BIG) and not paper.authors_truncated
    assert paper.abstract == ABSTRACT


def test_a_long_author_line_is_an_author_line_on_its_own():
    """Without neighbours to go by: ``classify`` alone reads it as names."""
    assert classify(", ".join(BIG), first=False) is Role.AUTHORS
    assert classify(", ".join(BIG[:200]), first=False) is Role.AUTHORS


@pytest.mark.parametrize(
    ("prefix", "group"),
    [
        ("NVIDIA, :, ", "NVIDIA"),
        ("NVIDIA: ", "NVIDIA"),
        ("GLM-4. 5 Team, :, ", "GLM-4. 5 Team"),
        ("Kimi Team, ", "Kimi Team"),
    ],
)
@pytest.mark.parametrize(
    ("end", "truncated"), [("", False), (", et al.", True), (" et al.", True), (" 等", True)]
)
def test_group_prefixes_and_a_trailing_et_al(prefix, group, end, truncated):
    line = prefix + ", ".join(BIG[:400]) + end
    text = seed((line, ABSTRACT), ("Ada Lovelace, Alan Turing", OTHER))
    first, second = parse_quietly(text)
    assert first.authors == (group, *BIG[:400]) and first.authors_truncated is truncated
    assert second.authors == ("Ada Lovelace", "Alan Turing")


def test_a_long_author_line_ending_with_an_initial_is_an_author_line():
    """A line over 400 characters that ends in a full stop is usually an abstract, unless the
    full stop is an initial's (``Jr.``, ``A.``)."""
    line = ", ".join([*BIG[:40], "Guy L. Steele Jr."])
    assert classify(line, first=False) is Role.AUTHORS
    assert classify(", ".join([*BIG[:40], "Ada A."]), first=False) is Role.AUTHORS


def _seconds(line: str) -> float:
    """The least CPU time of five reads of ``line`` as an author line (uncached)."""
    best = float("inf")
    for _ in range(5):
        forget()
        started = time.process_time()
        classify(line, first=False)
        best = min(best, time.process_time() - started)
    return best


def test_author_lines_are_read_in_time_linear_in_their_length():
    """Eight times the names take about eight times as long (64 times if it were quadratic);
    the bound leaves room for a busy machine."""
    short, long = ", ".join(names(500)), ", ".join(names(4_000))
    assert classify(long, first=False) is Role.AUTHORS
    assert _seconds(long) < 24 * max(_seconds(short), 1e-4)
    assert _seconds(long) < 1.0  # about 0.05 s


# --- category lines with other separators -------------------------------------------------------

SEPARATORS = [" - ", " – ", "; ", ";", " | ", "|", " / ", "/"]


@pytest.mark.parametrize("separator", SEPARATORS, ids=repr)
def test_category_lines_with_each_separator(separator):
    line = separator.join(["cs.RO", "cs.AI", "68T40", "I.2.9"])
    (paper,) = parse_quietly(seed((line, "Ada Lovelace, Alan Turing", ABSTRACT)))
    assert paper.categories == ("cs.RO", "cs.AI", "68T40", "I.2.9")
    assert paper.authors == ("Ada Lovelace", "Alan Turing")


@pytest.mark.parametrize("separator", [" - ", "; ", " | ", " / "], ids=repr)
def test_two_codes_alone_are_a_category_line_and_never_a_paper(separator):
    """The issue's ``cs.RO - cs.AI`` and ``cs.RO; cs.AI``, also without an author line, and as a
    seven-code line (too long to pass as a short label)."""
    many = separator.join(["cs.RO", "cs.AI", "cs.LG", "cs.CV", "cs.MA", "cs.CL", "I.2.9"])
    for line, parts in [("cs.RO" + separator + "cs.AI", 2), (many, 7)]:
        papers = parse_quietly(seed((line, ABSTRACT), ("cs.LG", OTHER)))
        assert [len(p.categories) for p in papers] == [parts, 1]
        assert [p.abstract for p in papers] == [ABSTRACT, OTHER]


def test_a_line_uses_the_separator_after_its_first_code():
    """A part keeps the other marks: ACM classes stay joined by their semicolons."""
    line = "cs.CV - cs.AI - I.2.10; I.4.8 - 68T45 (Primary) 68T07, 68U10 (Secondary)"
    (paper,) = parse_quietly(seed((line, "Ada Lovelace", ABSTRACT)))
    assert paper.categories == (
        "cs.CV",
        "cs.AI",
        "I.2.10; I.4.8",
        "68T45 (Primary) 68T07, 68U10 (Secondary)",
    )


@pytest.mark.parametrize(
    "heading",
    [
        "Reinforcement Learning - Reading list",
        "cs.LG - Reading list",
        "Robotics / Control",
        "cs.LG - 2025",
    ],
)
def test_a_heading_with_a_dash_stays_a_heading(heading):
    papers = parse_quietly(f"{heading}\n\ncs.LG - cs.AI\n\nAda Lovelace\n\n{ABSTRACT}\n")
    assert [(p.topic, p.categories, p.authors) for p in papers] == [
        (heading, ("cs.LG", "cs.AI"), ("Ada Lovelace",))
    ]


@pytest.mark.parametrize(
    "line",
    [
        "cs.RO ~ cs.AI",
        "cs.CV ~ cs.AI ~ cs.LG ~ cs.RO ~ cs.MA ~ cs.CL ~ I.2.10",
        "cs.IR - Information storage and retrieval of data, Natural language processing",
        "68T05, 68T07, 68T45, 68U10, 62H35, 94A08, 68T10",
    ],
)
def test_a_line_that_is_neither_a_category_line_nor_prose_is_a_warning_not_a_paper(line):
    text = seed(("cs.LG · cs.AI", "Ada Lovelace", OTHER), (line, "Alan Turing", ABSTRACT))
    with pytest.warns(ParseWarning) as caught:
        papers = parse_text(text, source="x.txt")
    assert [(p.abstract, p.authors, p.categories) for p in papers] == [
        (OTHER, ("Ada Lovelace",), ("cs.LG", "cs.AI")),
        (ABSTRACT, ("Alan Turing",), ()),
    ]
    (warning,) = [str(w.message) for w in caught]
    assert warning.startswith("x.txt:9: neither a category line, an author line nor prose")
    assert line[:20] in warning


def test_a_short_last_paragraph_of_words_is_still_an_abstract():
    """Prose is any block with a word that is not a code: a short abstract keeps its record."""
    papers = parse_quietly(seed(("cs.LG", "Ada Lovelace", OTHER), ("Thanks",)))
    assert [p.abstract for p in papers] == [OTHER, "Thanks"]


ARXIV = ["cs.LG", "cs.AI", "cs.CL", "cs.CV", "cs.RO", "stat.ML", "eess.SY", "q-bio.NC", "quant-ph"]
CLASSES = ["68T05", "68T07", "68Txx", "62-08", "I.2", "I.2.6", "H.3.3", "K.4.1", "I.4.m"]


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from([" - ", "; ", " | ", " / ", "/", ";"]),
    st.lists(st.sampled_from(ARXIV), min_size=1, max_size=6, unique=True),
    st.lists(st.sampled_from(CLASSES), max_size=4, unique=True),
)
def test_generated_category_lines_with_other_separators_come_back_as_such(sep, codes, classes):
    parts = codes + classes
    text = seed((sep.join(parts), "Ada Lovelace, Alan Turing", ABSTRACT))
    (paper,) = parse_quietly(text)
    assert paper.categories == tuple(parts)
    assert paper.authors == ("Ada Lovelace", "Alan Turing")


def test_papers_without_blank_lines_between_them_are_warned_about():
    """Category lines, author lines and abstracts written one under the other are one block, one
    abstract: a warning names it when it is longer than abstracts are (as soon as its key is
    given, it sticks to the paper this long text becomes when blank lines are put in)."""
    paper = (
        "Ada Lovelace, Alan Turing\n"
        + "We propose a method for exploration in sparse-reward tasks and show that it helps. " * 20
    )
    with pytest.warns(ParseWarning, match=r"x\.txt:3: an abstract of [\d,]+ characters in 8 lines"):
        (one,) = parse_text("Topic\n\n" + "\n".join([paper.strip()] * 4) + "\n", "x.txt")
    assert len(one.abstract) > 6_000
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(parse_text("Topic\n\n" + "\n\n".join([paper.strip()] * 4), "x.txt")) == 4
