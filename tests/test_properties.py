"""Property tests of the splitter: messy whitespace never changes the records that come back."""

from __future__ import annotations

import textwrap

from hypothesis import given, settings
from hypothesis import strategies as st

from rlpapers.parse import parse_bytes

lower = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=9)
capital = st.builds(lambda w: w.capitalize(), lower)
name = st.builds(lambda a, b: f"{a} {b}", capital, capital)
sentence = st.builds(
    lambda first, rest: " ".join([first.capitalize(), *rest]) + ".",
    lower,
    st.lists(lower, min_size=6, max_size=20),
)
abstract = st.builds(lambda s: " ".join(s), st.lists(sentence, min_size=1, max_size=4))
category = st.lists(st.builds(lambda a, b: f"{a} {b}", capital, capital), min_size=2, max_size=3)


@st.composite
def record(draw):
    return {
        "categories": draw(st.one_of(st.just([]), category)),
        "authors": draw(st.one_of(st.just([]), st.lists(name, min_size=2, max_size=6))),
        "abstract": draw(abstract),
        "wrap": draw(st.one_of(st.none(), st.integers(min_value=20, max_value=90))),
    }


@st.composite
def messy_join(draw):
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    blank = draw(st.sampled_from(["", " ", "\t", "  \t "]))
    extra = draw(st.integers(min_value=1, max_value=3))
    trail = draw(st.sampled_from(["", " ", "\t", "  "]))
    return newline, blank, extra, trail


def render(records, style):
    newline, blank, extra, trail = style
    blocks = ["Topic Header"]
    for rec in records:
        if rec["categories"]:
            blocks.append(" · ".join(rec["categories"]))
        if rec["authors"]:
            blocks.append(", ".join(rec["authors"]))
        body = rec["abstract"]
        if rec["wrap"]:
            body = "\n".join(
                textwrap.wrap(body, rec["wrap"], break_on_hyphens=False, break_long_words=False)
            )
        blocks.append(body)
    separator = (trail + newline) + (blank + newline) * extra
    lines = separator.join(block.replace("\n", trail + newline) for block in blocks)
    return lines.encode("utf-8")


@settings(max_examples=150, deadline=None)
@given(st.lists(record(), min_size=1, max_size=6), messy_join(), st.booleans())
def test_records_survive_messy_whitespace(records, style, bom):
    data = render(records, style)
    if bom:
        data = b"\xef\xbb\xbf" + data
    papers = parse_bytes(data, "gen.txt")
    got = [(list(p.categories), list(p.authors), p.abstract) for p in papers]
    assert got == [(r["categories"], r["authors"], r["abstract"]) for r in records]
    assert all(p.topic == "Topic Header" for p in papers)
