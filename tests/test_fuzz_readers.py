"""Fuzzing the bibliography readers (rlpapers.readers) with hostile input, in the style of
test_fuzz.py: random bytes, mixtures of BibTeX, RIS and JSON fragments and junk, random
records through export and back.

The property, for every example: reading returns records or raises ``ParseError`` (a file
that cannot be decoded), nothing else escapes, every warning names the file, and the work is
bounded (CPU time, so a loaded machine does not fail it). Through the CLI, as corpus files
beside a text file: exit 0, 1 or 2, never a traceback (test_fuzz.py's ``cli``).
"""

from __future__ import annotations

import json
import time
import warnings

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlpapers import export
from rlpapers.errors import ParseError, ParseWarning
from rlpapers.model import Paper
from rlpapers.readers import Record, read_bytes

from .test_fuzz import cli

FUZZ = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
BOUND = 5.0  # CPU seconds for one small hostile file


def read(data: bytes, name: str) -> list[Record]:
    """Read; check the property; return the records."""
    started = time.process_time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            records = read_bytes(data, name)
        except ParseError as error:
            assert error.source == name
            records = []
    spent = time.process_time() - started
    assert spent < BOUND, (name, spent)
    for warning in caught:
        if issubclass(warning.category, ParseWarning):
            assert str(warning.message).startswith(name + ":") or str(warning.message).startswith(
                name
            ), warning
    assert all(isinstance(r, Record) and r.source == name for r in records)
    assert all(r.title or r.abstract for r in records)
    for record in records:
        record.to_paper()  # every record makes a paper
    return records


BYTES = st.binary(max_size=2000) | st.binary(max_size=2000).map(lambda b: b.replace(b"\0", b""))
NAMES = st.sampled_from(["f.bib", "f.ris", "f.json", "f.jsonl"])


@FUZZ
@given(data=BYTES, name=NAMES)
def test_random_bytes(data, name):
    read(data, name)


BIB_PIECES = st.sampled_from(
    [
        "@article{a,\n title = {T},\n",
        '@misc{b, title = {Deep {RL}}, author = {M{\\"u}ller, H. and others}, year = 2020}\n',
        '@string{s = "X"}\n',
        'journal = s # { Y} # "Z",\n',
        "@comment{ @misc{c, title={x}} }\n",
        "crossref = {a},\n",
        "@misc{a, title={dup}}\n",
        "}\n",
        "{",
        "}",
        "\\",
        "$",
        "\\emph{",
        '\\"',
        "#",
        "%",
        "@",
        '@preamble{"x"}\n',
        "abstract = {We study $\\alpha$ and \\% of R\\&D.},\n",
        'title = "quoted {",\n',
        "year = {n.d.},\n",
        "\r\n",
        "\n",
    ]
)
JUNK = st.text(
    alphabet=st.sampled_from(list('ab ,=@{}\\"#%$~^&_\n\r\t') + ["é", "等"]), max_size=40
)


@FUZZ
@given(pieces=st.lists(BIB_PIECES | JUNK, max_size=20))
def test_random_bibtex(pieces):
    read("".join(pieces).encode("utf-8"), "f.bib")


RIS_PIECES = st.sampled_from(
    ["TY  - JOUR\n", "TI  - Title\n", "AU  - Smith, J.\n", "PY  - 2020///\n", "ER  -\n",
     "AB  - text\n", "  continued\n", "KW  - k\n", "UR  - https://arxiv.org/abs/2101.00001\n",
     "ID  - key1\n", "XX  - unknown\n", "TY  -\n", "\r\n", "\ufeff"]
)  # fmt: skip


@FUZZ
@given(pieces=st.lists(RIS_PIECES | JUNK, max_size=20))
def test_random_ris(pieces):
    read("".join(pieces).encode("utf-8"), "f.ris")


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 3000) | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "id",
                    "key",
                    "title",
                    "abstract",
                    "sources",
                    "type",
                    "authors",
                    "categories",
                    "authors_parsed",
                    "author",
                    "issued",
                    "year",
                    "DOI",
                    "versions",
                    "date",
                    "keyword",
                    "tags",
                ]
            ),  # fmt: skip
            inner,
            max_size=6,
        )
    ),
    max_leaves=10,
)


@FUZZ
@given(values=st.lists(JSON_VALUES, max_size=5), lines=st.booleans(), broken=st.booleans())
def test_random_json(values, lines, broken):
    text = "\n".join(json.dumps(v) for v in values) if lines else json.dumps(values, indent=1)
    if broken:
        text = text[: len(text) // 2]
    read(text.encode("utf-8"), "f.jsonl" if lines else "f.json")


@settings(FUZZ, max_examples=12)
@given(bib=st.lists(BIB_PIECES | JUNK, max_size=12), ris=st.lists(RIS_PIECES | JUNK, max_size=8))
def test_random_bibliography_files_in_a_corpus_folder(tmp_path_factory, bib, ris):
    corpus = tmp_path_factory.mktemp("corpus")
    (corpus / "a.bib").write_text("".join(bib), encoding="utf-8")
    (corpus / "b.ris").write_text("".join(ris), encoding="utf-8")
    (corpus / "c.txt").write_text("cs.LG\n\nAda Lovelace\n\nWe study policies.\n", encoding="utf-8")
    code, _ = cli("--corpus", corpus, "list", "-f", "json")
    if code == 0:
        cli("--corpus", corpus, "search", "policies title:deep", "-f", "tsv")
        cli("--corpus", corpus, "export", "-f", "bibtex")


# --- records through an export and back ---------------------------------------------------------

TEXT = st.text(
    alphabet=st.sampled_from(list("aBc xyZ,.:;-()'\"%&#_~^$\\{}*") + ["é", "ß", "等", "—"]),
    min_size=1,
    max_size=40,
).filter(lambda t: t.strip())
PAPERS = st.builds(
    lambda title, abstract, authors, year, tags, note, derived: Paper(
        id="x", abstract=abstract, key="k", title=title, authors=tuple(authors), year=year,
        tags=tuple(tags), note=note, title_derived=derived, source="a.txt", line=1,
    ),
    TEXT, TEXT, st.lists(TEXT.filter(lambda t: "," not in t), max_size=3),
    st.none() | st.integers(1, 9999), st.lists(TEXT, max_size=2), st.just("") | TEXT, st.booleans(),
)  # fmt: skip


@settings(FUZZ, max_examples=60)
@given(paper=PAPERS, fmt=st.sampled_from(["bibtex", "ris", "csljson", "jsonl"]))
def test_export_then_read_is_a_fixed_point_from_the_second_round(paper, fmt):
    name = {"bibtex": "f.bib", "ris": "f.ris", "csljson": "f.json", "jsonl": "f.jsonl"}[fmt]

    def again(text: str) -> str:
        records = read(text.encode("utf-8"), name)
        return export([r.to_paper().with_changes(key=r.key or "k") for r in records], fmt)

    second = again(export([paper], fmt))
    assert again(second) == second
