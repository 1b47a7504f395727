"""Exporters: golden files, round trips through independent readers, safe output, pipelines."""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import re
import subprocess
import sys

import bibtexparser
import pybtex.database
import pytest
import rispy
import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from pylatexenc.latex2text import LatexNodes2Text

from rlpapers import export, load_corpus
from rlpapers.errors import ExportError
from rlpapers.exporters import FORMATS, save
from rlpapers.exporters.latex import balance, to_latex
from rlpapers.model import Paper

from .conftest import DATA, SEEDS, run

GOLDEN = DATA / "export"
EXTENSIONS = {"bibtex": "bib", "csv": "csv", "markdown": "md", "json": "json", "jsonl": "jsonl",
              "yaml": "yaml", "csljson": "csl.json", "ris": "ris"}  # fmt: skip


@pytest.fixture(scope="module")
def papers():
    return list(load_corpus([SEEDS]).papers)


def words(text: str) -> set[str]:
    """Words of three or more letters outside math, markup removed: what a reader must keep."""
    text = re.sub(r"\$[^$]*\$", " ", text.replace("*", ""))
    text = re.sub(r"\\[A-Za-z]+", " ", text)
    text = re.sub(r"https?://\S+", " ", text)
    return set(re.findall(r"[A-Za-z]{3,}", text))


# --- golden files ------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", list(EXTENSIONS))
def test_export_golden(papers, fmt):
    path = GOLDEN / f"seeds.{EXTENSIONS[fmt]}"
    got = export(papers, fmt)
    if os.environ.get("RLPAPERS_REGEN"):
        path.write_bytes(got.encode("utf-8"))
    assert got == path.read_bytes().decode("utf-8")


def test_every_format_has_a_golden_file():
    assert set(EXTENSIONS) == set(FORMATS)


def test_output_is_deterministic(papers):
    for fmt in FORMATS:
        assert export(papers, fmt) == export(list(papers), fmt)


def test_unknown_format_lists_the_known_ones(papers):
    with pytest.raises(ExportError, match="known formats: bibtex, csv"):
        export(papers, "docx")


# --- BibTeX ------------------------------------------------------------------------------------


def test_bibtex_reads_back_in_bibtexparser_and_pybtex(papers):
    text = export(papers, "bibtex")
    library = bibtexparser.parse_string(text)
    assert len(library.entries) == 40 and not library.failed_blocks
    assert [e.key for e in library.entries] == [p.key for p in papers]
    assert len(pybtex.database.parse_string(text, "bibtex").entries) == 40


def test_bibtex_keeps_every_abstract_word(papers):
    decode = LatexNodes2Text().latex_to_text
    entries = {e.key: e for e in bibtexparser.parse_string(export(papers, "bibtex")).entries}
    for paper in papers:
        fields = entries[paper.key].fields_dict
        missing = words(paper.abstract) - words(decode(fields["abstract"].value))
        assert not missing, (paper.key, sorted(missing)[:5])
        assert "note" in fields  # nothing after the abstract was swallowed


def test_bibtex_fields(papers):
    by_key = {p.key: p for p in papers}
    entry = export([by_key["song_irpm"]], "bibtex")
    assert entry.startswith("@misc{song_irpm,\n")
    assert " and others}" in entry  # the author line ended in 等
    assert "title = {{IRPM}: Intergroup Relative Preference Modeling}" in entry
    assert "keywords = {Deep Learning, Large Language Models, 论文检索}" in entry
    assert "\\textbf{AlphaSAGE}" in export([by_key["alphasage"]], "bibtex")


def test_bibtex_escaping_rules():
    assert to_latex("35% of R&D #1 a_b ~x") == r"35\% of R\&D \#1 a\_b \textasciitilde{}x"
    assert (
        to_latex(r"kept: $\tilde{O}(d^2)$, 0.07\%, \textbf{bold}")
        == r"kept: $\tilde{O}(d^2)$, 0.07\%, \textbf{bold}"
    )
    assert to_latex("**Bold** and *it*") == r"\textbf{Bold} and \emph{it}"
    assert to_latex("a } b { c") == r"a \textbraceright{} b \textbraceleft{} c"
    assert to_latex(r"set $\{x\}$ and \{ alone") == r"set $\{x\}$ and \textbraceleft{} alone"
    assert (
        to_latex("a \\\\ b \\") == r"a \textbackslash{}\ b \textbackslash{}"
    )  # a stray \ is spelled out
    assert to_latex("costs $5 only") == r"costs \$5 only"
    assert to_latex("Aichmüller", ascii_only=True) == r"Aichm{\"u}ller"


def test_a_name_with_a_comma_stays_one_whole_name():
    """A corporate name from CSL-JSON (``{"literal": "Acme, Inc."}``) was written bare, and
    BibTeX read "Acme, Inc." as surname Acme, given name Inc.; CSL-JSON split it the same way."""
    paper = Paper(id="x", abstract="A.", key="k", title="T", authors=("Acme, Inc.", "Jane Doe"))
    persons = pybtex.database.parse_string(export([paper], "bibtex"), "bibtex").entries["k"]
    acme, doe = persons.persons["author"]
    assert (acme.last_names, acme.first_names) == (["{Acme, Inc.}"], [])
    assert (doe.last_names, doe.first_names) == (["Doe"], ["Jane"])
    authors = json.loads(export([paper], "csljson"))[0]["author"]
    assert authors == [{"literal": "Acme, Inc."}, {"family": "Doe", "given": "Jane"}]


def test_a_capitalised_particle_stays_in_the_bibtex_surname():
    """BibTeX reads "Luc Van Gool" as given names "Luc Van", surname "Gool" (a particle counts
    only in lower case), so styles cited "Gool" while the key said vangool and CSL-JSON
    "Van Gool": such a name is written surname first. Others are left as they were."""
    names = ("Luc Van Gool", "Oscar De La Hoya", "Ludwig van Beethoven", "Van Nguyen")
    paper = Paper(id="x", abstract="A.", key="k", title="T", authors=names)
    entry = pybtex.database.parse_string(export([paper], "bibtex"), "bibtex").entries["k"]
    parsed = [(p.prelast_names + p.last_names, p.first_names) for p in entry.persons["author"]]
    assert parsed == [
        (["Van", "Gool"], ["Luc"]),
        (["De", "La", "Hoya"], ["Oscar"]),
        (["van", "Beethoven"], ["Ludwig"]),
        (["Nguyen"], ["Van"]),
    ]
    assert "author = {Van Gool, Luc and De La Hoya, Oscar and Ludwig van Beethoven and" in (
        export([paper], "bibtex")
    )


def test_ris_writes_a_capitalised_particle_surname_first():
    """RIS authors are "Surname, Given"; one without a comma is split at its last space by
    Zotero's importer, which made "Luc Van Gool" Gool, Luc Van. Such names get the comma."""
    names = ("Luc Van Gool", "Ludwig van Beethoven", "Jane Doe")
    paper = Paper(id="x", abstract="A.", key="k", title="T", authors=names)
    entries = rispy.loads(export([paper], "ris"))
    assert entries[0]["authors"] == ["Van Gool, Luc", "Ludwig van Beethoven", "Jane Doe"]


def test_a_name_suffix_is_no_surname_in_keys_or_exports():
    """``Robert W. Heath Jr.``: BibTeX, RIS readers and CSL-JSON took ``Jr.`` for the surname
    (styles cited "Jr., R."), and the paper's key began with ``jr``. The suffix is written where
    each format keeps one, and every export reads back as the name written."""
    from rlpapers.keys import base_key
    from rlpapers.readers import read_papers

    names = ("Robert W. Heath Jr.", "Donald C. Wunsch II", "Luc Van Gool Jr.", "Jane Doe")
    paper = Paper(id="x", abstract="We study radios.", key="k", title="Radio", authors=names)
    assert base_key(paper).startswith("heath")
    entry = pybtex.database.parse_string(export([paper], "bibtex"), "bibtex").entries["k"]
    parsed = [
        (p.prelast_names + p.last_names, p.lineage_names, p.first_names + p.middle_names)
        for p in entry.persons["author"]
    ]
    assert parsed[:3] == [
        (["Heath"], ["Jr."], ["Robert", "W."]),
        (["Wunsch"], ["II"], ["Donald", "C."]),
        (["Van", "Gool"], ["Jr."], ["Luc"]),
    ]
    assert rispy.loads(export([paper], "ris"))[0]["authors"][:2] == [
        "Heath, Robert W., Jr.",
        "Wunsch, Donald C., II",
    ]
    csl = json.loads(export([paper], "csljson"))[0]["author"][0]
    assert csl == {"family": "Heath", "given": "Robert W.", "suffix": "Jr."}
    for fmt, name in (("bibtex", "x.bib"), ("ris", "x.ris"), ("csljson", "x.json")):
        (back,) = read_papers(export([paper], fmt).encode(), name, None, {})
        assert back.authors == names, fmt


def test_a_name_written_surname_first_without_a_comma_keeps_its_surname():
    """Scopus and Web of Science write ``Sutton R.S.``: its surname was taken to be ``R.S.``
    (a new paper's key began ``rs``, BibTeX cited "R.S., S."). The initials at the end are the
    given names."""
    from rlpapers.keys import base_key
    from rlpapers.text import given_names, surname

    names = ("Sutton R.S.", "Van Gool L.", "Kim J.-H.", "R. S. Sutton")
    assert [(surname(n), given_names(n)) for n in names] == [
        ("Sutton", "R.S."),
        ("Van Gool", "L."),
        ("Kim", "J.-H."),
        ("Sutton", "R. S."),
    ]
    paper = Paper(id="x", abstract="We study TD.", key="k", title="TD", authors=names, year=1988)
    assert base_key(paper).startswith("sutton1988")
    assert "author = {Sutton, R.S. and Van Gool, L. and Kim, J.-H. and R. S. Sutton}" in export(
        [paper], "bibtex"
    )


def test_a_link_ending_in_a_backslash_keeps_its_entry_readable():
    """``url = {https://example.org/files\\}`` (a RIS ``UR`` line ending in a backslash) is
    balanced for BibTeX, but bibtexparser, the BibTeX reader of our own corpus files, took
    ``\\}`` as an escaped brace and lost the entry: a backslash is percent-encoded as ``%5C``."""
    paper = Paper(
        id="x", abstract="A.", key="k", title="T", url="https://example.org/a\\", doi="10.1/b\\"
    )
    library = bibtexparser.parse_string(export([paper], "bibtex"))
    assert not library.failed_blocks and len(library.entries) == 1
    fields = library.entries[0].fields_dict
    assert (fields["url"].value, fields["doi"].value) == ("https://example.org/a%5C", "10.1/b%5C")


def test_text_between_two_dollar_amounts_cannot_break_latex():
    """``from $5 & $10`` reads as math ``$5 & $``, and a bare ``&`` or ``#`` there stops LaTeX
    (misplaced alignment tab; macro parameter character in math): both are escaped, as ``%``
    is; an ``&`` of an alignment environment is kept."""
    assert to_latex("Prices rose from $5 & $10") == r"Prices rose from $5 \& $10"
    assert to_latex("rank $3 per #2 query, $4") == r"rank $3 per \#2 query, $4"
    matrix = r"$\begin{pmatrix} a & b \end{pmatrix}$"
    assert to_latex(matrix) == matrix
    # after a line break \\ a % is bare, not escaped
    assert to_latex(r"$a \\% b$ and $\\\%$") == r"$a \\\% b$ and $\\\%$"


def test_a_line_break_in_a_field_cannot_start_an_entry():
    """The library takes papers built by hand: a value with a line break before ``@`` began
    a line of the .bib with ``@book``, and bibtexparser lost the entry there. Fields are
    written on one line, as BibTeX reads them anyway."""
    paper = Paper(id="x", abstract="A text.\n@misc{y}", key="k", title="T", venue="V\n@book{z}")
    text = export([paper], "bibtex")
    library = bibtexparser.parse_string(text)
    assert not library.failed_blocks and [e.key for e in library.entries] == ["k"]
    assert library.entries[0].fields_dict["howpublished"].value == "V @book{z}"


def test_bibtex_ascii_mode_is_pure_ascii_except_cjk(papers):
    text = export(papers, "bibtex", ascii=True)
    assert all(ord(c) < 128 or "\u3400" <= c <= "\u9fff" for c in text)
    assert not bibtexparser.parse_string(text).failed_blocks


def test_metadata_fields_reach_bibtex():
    paper = Paper(
        id="x",
        abstract="A text.",
        key="k",
        title="T",
        year=2025,
        venue="ICLR",
        doi="10.1/x",
        note="Oral",
    )
    entry = export([paper], "bibtex")
    assert (
        "year = {2025}" in entry and "howpublished = {ICLR}" in entry and "doi = {10.1/x}" in entry
    )
    assert "note = {Oral. Abstract from :0}" in entry or "note = {Oral." in entry


SPECIALS = st.text(alphabet=st.sampled_from(list("abc XYZ09%&#_{}$\\~^.,")), max_size=80)


@settings(max_examples=300, deadline=None)
@given(SPECIALS)
def test_random_specials_survive_a_bibtex_round_trip(text):
    paper = Paper(id="x", abstract=text or "x", key="key", title=text or "t", note="after")
    bib = export([paper], "bibtex")
    library = bibtexparser.parse_string(bib)
    assert not library.failed_blocks and len(library.entries) == 1
    fields = library.entries[0].fields_dict
    assert fields["note"].value == "Abstract from :0" or fields["note"].value.startswith("after")
    assert balance(fields["abstract"].value) == fields["abstract"].value
    assert len(pybtex.database.parse_string(bib, "bibtex").entries) == 1


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("abc XYZ%&#_~^.,")), min_size=1, max_size=60))
def test_plain_specials_read_back_as_themselves(text):
    assume(not re.search(r"__\S", text))  # markdown bold, converted on purpose
    rendered = LatexNodes2Text().latex_to_text(to_latex(text)).replace("ˆ", "^")
    assert " ".join(rendered.split()) == " ".join(text.split())


# --- CSV, Markdown, JSON, YAML, CSL-JSON, RIS --------------------------------------------------


def test_csv_reads_back_with_the_csv_module(papers):
    rows = list(csv.DictReader(io.StringIO(export(papers, "csv"), newline="")))
    assert list(rows[0]) == [
        "id",
        "key",
        "title",
        "name",
        "authors",
        "categories",
        "topic",
        "source",
        "abstract",
        "links",
        "year",
        "venue",
        "url",
        "doi",
        "tags",
        "note",
    ]
    assert [r["abstract"] for r in rows] == [p.abstract for p in papers]
    assert rows[20]["authors"].split("; ")[0] == papers[20].authors[0]


def test_csv_excel_bom_and_formula_defusing():
    paper = Paper(
        id="x", abstract='=HYPERLINK("http://evil")', key="k", title="+cmd", topic="强化学习"
    )
    text = export([paper], "csv", excel=True)
    assert text.startswith("\ufeff")
    row = list(csv.DictReader(io.StringIO(text.lstrip("\ufeff"))))[0]
    assert (
        row["abstract"].startswith("'=") and row["title"] == "'+cmd" and row["topic"] == "强化学习"
    )


def test_csv_for_excel_cuts_a_cell_longer_than_excel_holds():
    """An Excel cell holds 32,767 characters, and a longer one spills into the rows below (the
    3,303 authors of one real paper are 40,000 characters): ``--excel`` cuts it with an
    ellipsis. Plain CSV keeps every character."""
    authors = tuple(f"Author Number{n}" for n in range(3_000))
    paper = Paper(id="x", abstract="A.", key="k", title="T", authors=authors)
    row = next(csv.DictReader(io.StringIO(export([paper], "csv", excel=True).lstrip("\ufeff"))))
    assert len(row["authors"]) == 32_767 and row["authors"].endswith("…")
    plain = next(csv.DictReader(io.StringIO(export([paper], "csv"))))
    assert plain["authors"] == "; ".join(authors)


def test_csv_fields_pick_columns(papers):
    text = export(papers[:2], "csv", fields=["key", "title"])
    assert text.splitlines()[0] == "key,title"
    with pytest.raises(ExportError, match="unknown CSV field 'colour'"):
        export(papers, "csv", fields=["colour"])


def test_markdown_reads_back_with_a_commonmark_parser(papers):
    md = MarkdownIt("commonmark")
    tokens = md.parse(export(papers, "markdown"))
    headings = [
        tokens[i + 1].content
        for i, t in enumerate(tokens)
        if t.type == "heading_open" and t.tag == "h2"
    ]
    assert len(headings) == 40
    rendered = md.render(export(papers, "markdown"))
    for paper in papers:
        assert words(paper.abstract) <= words(re.sub(r"<[^>]+>", " ", rendered))


def test_markdown_shows_an_entity_reference_as_written():
    """``&amp;`` in a title or abstract (text copied from HTML) rendered as ``&``, ``&#169;``
    as the copyright sign: each renders as written now, a plain ``&`` as before."""
    import html

    text = "R&amp;D &copy; and &#169; or &#xA9;, AT&T, a \\&amp; b"
    paper = Paper(id="p", abstract=text, title=text, authors=("A&amp;B Lab",), key="k")
    for style in ("list", "table"):
        rendered = MarkdownIt("commonmark").render(export([paper], "markdown", style=style))
        shown = html.unescape(re.sub(r"<[^>]+>", "", rendered))
        assert shown.count(text) == (2 if style == "list" else 1), shown
        assert "A&amp;B Lab" in shown


@pytest.mark.parametrize(
    "start",
    ["```python", "~~~ fence", "## Results", "###### x", ">quoted", "1. First", "2) Second", "- x"],
)
def test_markdown_text_that_starts_like_a_block_stays_a_paragraph(start):
    """An abstract (or a meta line, or a link shown as text) that starts like a code fence, a
    heading, a quote or a list rendered as that block: a fence swallowed every paper after it."""
    paper = Paper(
        id="x", abstract=f"{start} opens this abstract.", key="k", title="T", topic=start,
        url=f"{start}:x",
    )  # fmt: skip
    text = export([paper, Paper(id="y", abstract="Next.", key="j", title="U")], "markdown")
    tokens = MarkdownIt("commonmark").parse(text)
    blocks = [t.type for t in tokens if t.level == 0 and t.nesting == 1]
    paper_blocks = ["heading_open", "paragraph_open", "paragraph_open"]
    assert blocks == [*paper_blocks, "paragraph_open", *paper_blocks]  # the first has a link
    paragraphs = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "paragraph_open"]
    inline = MarkdownIt("commonmark").renderInline
    assert [inline(p) for p in paragraphs[:3]] == [
        inline(start) + " — <code>k</code>",
        inline(f"{start} opens this abstract."),
        inline(f"{start}:x"),
    ]


def test_markdown_line_breaks_in_a_hand_made_abstract_stay_in_its_paragraph():
    """Records hold one-line abstracts, but a Paper made by hand may not: a later line that
    starts with ``- ``, ``#`` or a fence opened a list, a heading or a code block, and four
    spaces before the first line an indented code block."""
    for abstract in ("One.\n- item\n# h\n```\nend", "    One. - item # h ``` end"):
        paper = Paper(id="x", abstract=abstract, key="k", title="T")
        tokens = MarkdownIt("commonmark").parse(export([paper], "markdown"))
        blocks = [t.type for t in tokens if t.level == 0 and t.nesting == 1]
        assert blocks == ["heading_open", "paragraph_open", "paragraph_open"]  # no code block
        assert tokens[-2].content == "One. - item # h ``` end"


def test_markdown_table_escapes_pipes_and_newlines():
    paper = Paper(id="x", abstract="a", key="k", title="A | B\nC", authors=("X|Y",))
    table = (
        MarkdownIt("commonmark").enable("table").parse(export([paper], "markdown", style="table"))
    )
    cells = [t.content for t in table if t.type == "inline"]
    # escaped pipes stay inside their cells (key, title, authors, year, categories)
    assert cells[5:10] == ["`k`", "A | B C", "X|Y", "", ""]


def test_json_yaml_and_jsonl_round_trip(papers):
    as_json = json.loads(export(papers, "json"))
    assert as_json == yaml.safe_load(export(papers, "yaml"))
    assert as_json == [json.loads(line) for line in export(papers, "jsonl").splitlines()]
    assert [Paper.from_dict(r) for r in as_json] == papers
    assert "强化学习" in export(papers, "yaml")  # unicode kept, not \u escapes


def test_csljson_and_ris(papers):
    items = json.loads(export(papers, "csljson"))
    assert len(items) == 40 and all(i["type"] == "article" and i["title"] for i in items)
    with_authors = next(i for i in items if i["author"])
    assert "family" in with_authors["author"][0]
    ris = export(papers, "ris")
    assert ris.count("TY  - GEN") == 40 and ris.count("ER  -") == 40
    assert all(len(line) > 5 and line[2:6] == "  - " for line in ris.splitlines() if line)


def test_csljson_and_ris_leave_out_an_abstract_the_paper_lacks():
    """A bibliography entry without an abstract got an empty ``AB  - `` line and
    ``"abstract": ""``: nothing is written for it now; a paper's abstract still is."""
    entry = Paper(id="x", abstract="", key="k", title="A Title", authors=("Ada Lovelace",))
    assert "AB  -" not in export([entry], "ris")
    assert "abstract" not in json.loads(export([entry], "csljson"))[0]
    text = Paper(id="y", abstract="We study things.", key="j", title="T")
    assert "AB  - We study things." in export([text], "ris")
    assert json.loads(export([text], "csljson"))[0]["abstract"] == "We study things."


def test_option_for_another_format_is_an_error(papers):
    """The library names its own parameters; the CLI words the same error in its flags."""
    with pytest.raises(ExportError, match="'excel' option applies to the csv format, not bibtex"):
        export(papers, "bibtex", excel=True)
    refused = run("export", "-f", "bibtex", "--excel", code=2)
    assert refused.stderr == "error: --excel applies to --format csv, not bibtex\n"


# --- safe output -------------------------------------------------------------------------------


def test_save_is_atomic_and_refuses_to_overwrite(tmp_path):
    target = tmp_path / "out.bib"
    save("one", target)
    with pytest.raises(ExportError, match=r"exists \(save with force=True"):
        save("two", target)
    refused = run("export", "-f", "ids", "-o", target, code=2)
    assert refused.stderr == f"error: {target} exists; use --force to replace it\n"
    save("two", target, force=True)
    assert target.read_text() == "two"
    with pytest.raises(ExportError, match="does not exist"):
        save("x", tmp_path / "missing" / "out.bib")
    assert [p.name for p in tmp_path.iterdir()] == ["out.bib"]


def test_save_never_replaces_a_file_another_process_wrote_meanwhile(tmp_path, monkeypatch):
    """The name was free when ``save`` looked; another process wrote a file there while the
    export was being written. It stays, and the export is refused as for any existing file,
    leaving no temporary file behind."""
    target = tmp_path / "out.bib"
    sync = os.fsync

    def another_process_writes(fd: int) -> None:
        sync(fd)
        target.write_text("theirs")

    monkeypatch.setattr(os, "fsync", another_process_writes)
    with pytest.raises(ExportError, match=r"exists \(save with force=True"):
        save("ours", target)
    assert target.read_text() == "theirs"
    assert [p.name for p in tmp_path.iterdir()] == ["out.bib"]


def test_save_writes_a_new_file_where_hard_links_are_not_supported(tmp_path, monkeypatch):
    def no_links(*args: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    save("text", tmp_path / "out.bib")
    assert [(p.name, p.read_text()) for p in tmp_path.iterdir()] == [("out.bib", "text")]
    with pytest.raises(ExportError, match="exists"):
        save("again", tmp_path / "out.bib")


def test_an_output_name_ending_in_a_slash_is_a_folder_not_a_file(tmp_path):
    """``-o out.bib/`` wrote a file named out.bib: the slash that says "a folder" was lost."""
    refused = run("export", "-o", f"{tmp_path}/out.bib/", code=2)
    assert "out.bib/ names a folder; give a file name" in refused.stderr
    assert list(tmp_path.iterdir()) == []


def test_save_writes_a_long_but_valid_file_name(tmp_path):
    """A 244-character name is a valid file name, but the temporary file beside it took the
    name plus 24 characters, past the 255-byte limit: "File name too long"."""
    target = tmp_path / ("a" * 240 + ".bib")
    save("text", target)
    assert target.read_text() == "text" and [p.name for p in tmp_path.iterdir()] == [target.name]


def test_failed_write_leaves_no_partial_file(tmp_path, monkeypatch):
    target = tmp_path / "out.bib"
    target.write_text("old")

    def boom(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(ExportError, match="No space left"):
        save("new", target, force=True)
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["out.bib"]


# --- CLI ---------------------------------------------------------------------------------------


def test_cli_export_all_and_query():
    assert run("export").stdout.count("@misc{") == 40
    assert (
        run("export", "entropy", "-f", "ids").stdout.split()[0]
        == run("search", "entropy", "-f", "ids").stdout.split()[0]
    )
    assert run("export", "nosuchwordanywhere", code=1).stdout == ""


def test_cli_export_ids_from_stdin_and_file(tmp_path):
    ids = run("search", "entropy", "-f", "ids").stdout
    bib = run("export", "--format", "bibtex", "--ids", "-", input=ids).stdout
    assert bib.count("@misc{") == len(ids.split())
    listing = tmp_path / "keys.txt"
    listing.write_text("# my reading list\nqerl\n\npcl\n")
    assert run("export", "--ids", listing, "-f", "ids").stdout.count("\n") == 2
    assert "nosuch" in run("export", "--ids", "-", input="nosuch\n", code=1).stderr


def test_cli_export_refuses_a_query_with_ids():
    """``export QUERY --ids -`` exported the listed papers and silently dropped the query (a
    query matching none of them still exported them all): the two are alternatives."""
    refused = run("export", "nosuchwordanywhere", "--ids", "-", "-f", "ids", input="qerl\n", code=2)
    assert refused.stdout == "" and "--ids" in refused.stderr and "query" in refused.stderr


def test_cli_export_output_file(tmp_path):
    target = tmp_path / "refs.bib"
    result = run("export", "-o", target)
    assert "wrote 40 papers" in result.stderr and target.read_text().count("@misc{") == 40
    assert "exists" in run("export", "-o", target, code=2).stderr
    run("export", "-o", target, "--force", "-f", "csv")
    assert target.read_text().startswith("id,key,title")
    assert "does not exist" in run("export", "-o", tmp_path / "no" / "x.bib", code=2).stderr


def test_cli_export_empty_fields_is_an_error_not_every_column():
    """``--fields "$COLUMNS"`` with an empty variable wrote every column, as if no --fields."""
    refused = run("export", "-f", "csv", "--fields", "", code=2)
    assert refused.stdout == "" and "unknown CSV field ''" in refused.stderr


def test_cli_export_wrong_option_is_exit_2():
    assert (
        "--ascii applies to --format bibtex" in run("export", "-f", "csv", "--ascii", code=2).stderr
    )


def test_list_and_search_accept_export_formats():
    assert run("list", "-f", "bibtex").stdout.count("@misc{") == 40
    assert run("search", "entropy", "-f", "ris").stdout.count("TY  - GEN") >= 1


def test_shell_pipeline_search_to_bibtex(tmp_path):
    env = dict(os.environ, NO_COLOR="1")
    rl = f"'{sys.executable}' -m rlpapers"
    pipeline = f"{rl} search entropy --format ids | {rl} export --format bibtex --ids -"
    proc = subprocess.run(
        pipeline, shell=True, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    library = bibtexparser.parse_string(proc.stdout)
    assert len(library.entries) >= 3 and not library.failed_blocks


def test_ascii_keeps_the_capital_of_an_accented_word_protected():
    """--ascii wrote R{\\'e}nyi, whose R a sentence-case style (and pandoc) lower-cases."""
    from rlpapers.exporters.latex import protect_capitals, to_latex

    assert protect_capitals(to_latex("A Rényi view of Über", True)) == (
        "A {R{\\'e}nyi} view of {{\\\"U}ber}"
    )
    assert protect_capitals(to_latex("café rényi", True)) == "caf{\\'e} r{\\'e}nyi"
    assert protect_capitals(to_latex("A Rényi view", False)) == "A Rényi view"


def test_libyaml_and_pure_python_yaml_write_the_same_records(papers):
    """The YAML export uses libyaml's dumper where PyYAML has it; what it writes loads back to
    the records the pure-Python dumper's text gives, tricky strings included."""
    import dataclasses

    import yaml

    from rlpapers.exporters.json_ import records
    from rlpapers.exporters.yaml_ import dump

    if not hasattr(yaml, "CSafeDumper"):
        pytest.skip("this PyYAML was built without libyaml")
    odd = dataclasses.replace(
        papers[0],
        title='Key: "quoted" #hash - dash: [x] {y} *star &amp | pipe > gt % pct ' + "é" * 150,
        note="yes\tno null ~ 'single' \\ back\u2028sep",
        tags=("on", "off", "1e3", "2025-01-01"),
    )
    data = records([odd, *papers])
    slow, fast = dump(data, yaml.SafeDumper), dump(data, yaml.CSafeDumper)
    assert yaml.safe_load(fast) == yaml.safe_load(slow) == data
    for dumper in (yaml.SafeDumper, yaml.CSafeDumper):  # the events are PyYAML's own
        assert dump(data, dumper) == _pyyaml_dump(data, dumper)


def test_yaml_strings_read_back_as_strings_in_yaml_1_2():
    """PyYAML knows YAML 1.1, where ``1e3`` and ``0o17`` are strings, and wrote them plain; a
    YAML 1.2 reader (ruamel.yaml, yq, js-yaml) reads them as the numbers 1000.0 and 15."""
    from ruamel.yaml import YAML

    numbers = ("1e3", "1.5e3", "-2E-3", "+1e+3", "-.5", "0o17", "1e3x", "0o8")
    paper = Paper(id="x", abstract="A.", key="k", title="1e3", tags=numbers)
    text = export([paper], "yaml")
    records = json.loads(export([paper], "json"))
    assert YAML(typ="safe", pure=True).load(text) == records == yaml.safe_load(text)
    assert "- 1e3x" in text and "- 0o8" in text  # strings in both stay plain


def _pyyaml_dump(data, dumper):
    return yaml.dump(data, Dumper=dumper, allow_unicode=True, sort_keys=False, width=100)


_scalars = (
    st.none() | st.booleans() | st.integers() | st.floats() | st.text()
    | st.sampled_from(["", "~", "null", "yes", "No", "on", "1e3", ".inf", "-.5", "0x1F", "0o17",
                       "2025-01-01", "12:30:00", "<<", "=", "- a", "? b", "#c", "a: b", "'q'"])
)  # fmt: skip
_yaml_data = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(_yaml_data)
def test_the_yaml_writer_writes_what_pyyaml_writes(data):
    """Byte for byte: strings that would read back as another type stay quoted, numbers and
    nulls plain, for the pure-Python emitter and libyaml's alike."""
    from rlpapers.exporters.yaml_ import dump

    dumpers = [yaml.SafeDumper] + ([yaml.CSafeDumper] if hasattr(yaml, "CSafeDumper") else [])
    for dumper in dumpers:
        assert dump(data, dumper) == _pyyaml_dump(data, dumper)


def test_the_yaml_writer_leaves_other_values_to_pyyaml():
    """A value no record holds (a date, an object) goes through PyYAML's representer."""
    import datetime

    from rlpapers.exporters.yaml_ import dump

    data = [{"when": datetime.date(2025, 1, 2), "n": 1}]
    assert dump(data, yaml.SafeDumper) == _pyyaml_dump(data, yaml.SafeDumper)
    with pytest.raises(yaml.representer.RepresenterError):
        dump([object()], yaml.SafeDumper)
