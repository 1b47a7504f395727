"""What a script and a researcher rely on (issue 11): every hit in a pipe, metadata fields and
filters, each command's honest --format list, one TSV schema, and the smaller papercuts.

Pipes are tested twice: through CliRunner (whose stdout is not a terminal) and through a real
subprocess pipe, which is what a shell gives."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

import pytest

from rlpapers.cli import render
from rlpapers.cli.render import TSV_COLUMNS

from .conftest import one_file_corpus, run

METADATA = """\
qerl:
  year: 2025
  venue: ICLR
  tags: [toread, quantization]
pcl:
  year: 2024
  venue: NeurIPS
  tags: [toread]
  doi: 10.1234/pcl
  note: read with the reading group
"""


def _cli(*args: str, env: dict[str, str] | None = None, input: str | None = None):
    """The installed CLI in a subprocess, stdout a real pipe."""
    return subprocess.run(
        [sys.executable, "-m", "rlpapers", *args],
        capture_output=True,
        text=True,
        input=input,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


@pytest.fixture
def annotated(seeds_copy):
    (seeds_copy / "metadata.yaml").write_text(METADATA, encoding="utf-8")
    return seeds_copy


@pytest.fixture
def on_a_terminal(monkeypatch):
    monkeypatch.setattr(render, "is_terminal", lambda: True)


# --- 1. pipes get every hit --------------------------------------------------------------------


def test_a_pipe_gets_every_hit_ranked_like_export():
    everything = run("export", "explor*", "-f", "ids").stdout.split()
    assert len(everything) == 11
    piped = run("search", "explor*", "-f", "ids").stdout.split()
    assert sorted(piped) == sorted(everything)
    limited = run("search", "explor*", "-f", "ids", "--limit", "3").stdout.split()
    assert limited == piped[:3]


def test_a_real_pipe_gets_every_hit_and_the_readme_pipeline_drops_nothing():
    searched = _cli("search", "explor*")
    assert searched.returncode == 0 and searched.stderr == ""
    lines = searched.stdout.splitlines()
    assert len(lines) == 11 and all(len(line.split("\t")) == len(TSV_COLUMNS) for line in lines)
    ids = _cli("search", "explor*", "--format", "ids").stdout
    exported = _cli("export", "--format", "bibtex", "--ids", "-", input=ids)
    assert exported.returncode == 0 and exported.stdout.count("@misc{") == 11


def test_a_terminal_gets_ten_and_a_note_on_stderr(on_a_terminal):
    result = run("search", "explor*", "-f", "ids")
    assert len(result.stdout.split()) == 10
    assert result.stderr == "note: 10 of 11 shown (--all for the rest)\n"
    assert len(run("search", "explor*", "-f", "ids", "--all").stdout.split()) == 11
    quiet = run("search", "explor*", "-f", "ids", "--limit", "10")
    assert quiet.stderr == ""  # asked for ten: nothing to say
    few = run("search", "qerl", "-f", "ids")
    assert few.stderr == ""  # everything is shown


def test_list_on_a_terminal_shows_ten_and_a_pipe_gets_every_paper(on_a_terminal, monkeypatch):
    """list dumped every paper on a terminal (14,388 wrapped lines for 3k papers)."""
    result = run("list", "-f", "ids")
    assert len(result.stdout.split()) == 10
    assert result.stderr == "note: 10 of 40 shown (--all for the rest)\n"
    assert len(run("list", "-f", "ids", "--all").stdout.split()) == 40
    assert len(run("list", "-f", "ids", "-n", "3").stdout.split()) == 3
    assert run("list", "-f", "ids", "-n", "3").stderr == ""  # asked for three
    monkeypatch.setattr(render, "is_terminal", lambda: False)
    assert len(run("list", "-f", "ids").stdout.split()) == 40
    assert len(run("list", "-f", "ids", "--limit", "5").stdout.split()) == 5


def test_formats_that_print_no_snippet_make_none(monkeypatch):
    import rlpapers.index.hits as made

    def refuse(*args, **kwargs):
        raise AssertionError("a snippet was made for a format that does not print it")

    monkeypatch.setattr(made, "make_snippet", refuse)
    for fmt in ("tsv", "ids", "json", "jsonl", "yaml", "bibtex"):
        assert run("search", "entropy", "-f", fmt).stdout
    hits = json.loads(run("search", "entropy", "-f", "json").stdout)
    assert "snippet" not in hits[0] and "score" in hits[0]


def test_iter_search_loads_records_only_as_hits_are_read(monkeypatch):
    from rlpapers.library import Library

    lib = Library()
    lib.search("entropy")  # build and open the index first
    store = lib.index.store
    fetched: list[str] = []
    real = store.fetch

    def counting(ids):
        ids = list(ids)
        fetched.extend(ids)
        return real(ids)

    monkeypatch.setattr(store, "fetch", counting)
    hits = lib.iter_search("learning", limit=None, snippets=False)
    first_three = [next(hits) for _ in range(3)]
    assert len(first_three) == 3 and len(fetched) == 10  # one small first batch
    rest = list(hits)
    assert len(rest) + 3 == lib.count("learning") > 20
    assert len(fetched) == len(rest) + 3 and not any(h.snippet for h in rest)


def test_a_reader_that_stops_early_ends_the_search_quietly(tmp_path):
    """The hits fill far more than a pipe's 64 KiB buffer, so the run is still writing when the
    reader leaves: it must end as a broken pipe (141), quietly. (Over the bundled corpus the
    whole output fitted in the buffer, and the run could exit 0 before the reader left.)"""
    blocks = [
        f"We propose M{i}RL: learning a policy for task {i} with entropy-regularised "
        f"reinforcement learning, which improves sample efficiency on benchmark suite {i}."
        for i in range(800)
    ]
    corpus = one_file_corpus(tmp_path / "corpus", blocks, header="Topic")
    argv = [sys.executable, "-m", "rlpapers", "--corpus", str(corpus), "search", "learning"]
    subprocess.run([*argv, "-f", "ids"], check=True, capture_output=True, timeout=120)  # built
    full = subprocess.run([*argv, "-f", "jsonl"], capture_output=True, timeout=120).stdout
    assert len(full) > 4 * 65536
    proc = subprocess.Popen(
        [*argv, "-f", "jsonl"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline()
    proc.stdout.close()  # like `| head -1`
    assert proc.wait(timeout=120) == 141
    assert (proc.stderr.read() if proc.stderr else "") == ""


# --- 2. what users annotate --------------------------------------------------------------------


def test_metadata_fields_are_searchable(annotated):
    def keys(query):
        return sorted(
            json.loads(line)["key"]
            for line in run("--corpus", annotated, "search", query, "-f", "jsonl").stdout.split(
                "\n"
            )
            if line
        )

    assert keys("year:2025") == ["qerl"]
    assert keys("year:[2020 TO 2024]") == ["pcl"]
    assert keys("year:[2024 TO 2025]") == ["pcl", "qerl"]
    assert keys("venue:neurips") == ["pcl"]
    assert keys("tag:toread") == ["pcl", "qerl"]
    assert keys("tags:quantization") == ["qerl"]
    assert keys("tag:toread AND year:2025") == ["qerl"]
    assert keys('note:"reading group"') == ["pcl"]
    assert keys("doi:10.1234/pcl") == ["pcl"]
    run("--corpus", annotated, "search", "year:1999", code=1)


def test_metadata_filters(annotated):
    def keys(*args):
        out = run("--corpus", annotated, "list", "-f", "jsonl", *args, code=None or 0).stdout
        return sorted(json.loads(line)["key"] for line in out.splitlines())

    assert keys("--year", "2024..2025") == ["pcl", "qerl"]
    assert keys("--year", "2025") == ["qerl"]
    assert keys("--year", "..2024") == ["pcl"]
    assert keys("--year", "2025..") == ["qerl"]
    assert keys("--tag", "toread") == ["pcl", "qerl"]
    assert keys("--tag", "toread", "--tag", "quantization") == ["qerl"]  # all tags required
    assert keys("--venue", "iclr", "--venue", "neurips") == ["pcl", "qerl"]  # any venue
    assert keys("--venue", "neurips", "--tag", "toread") == ["pcl"]
    hits = run("--corpus", annotated, "search", "learning", "--tag", "toread", "-f", "ids")
    assert len(hits.stdout.split()) == 2
    bad = run("--corpus", annotated, "list", "--year", "2025..2020", code=2)
    assert "--year" in bad.stderr


def test_metadata_columns_and_stats_facets(annotated):
    out = run("--corpus", annotated, "export", "-f", "csv", "--fields", "key,year,venue,tags")
    rows = {r["key"]: r for r in csv.DictReader(io.StringIO(out.stdout))}
    assert rows["qerl"] == {
        "key": "qerl",
        "year": "2025",
        "venue": "ICLR",
        "tags": "toread; quantization",
    }
    assert rows["pcl"]["year"] == "2024" and rows["zhan_tecrl"]["year"] == ""
    tsv = run("--corpus", annotated, "list", "--header", "--tag", "quantization").stdout
    header, line = tsv.splitlines()
    row = dict(zip(header.split("\t"), line.split("\t"), strict=True))
    assert (row["year"], row["venue"], row["tags"]) == ("2025", "ICLR", "toread; quantization")
    table = run("--corpus", annotated, "export", "-f", "markdown", "--style", "table").stdout
    assert "| year |" in table and "| 2025 |" in table
    stats = json.loads(run("--corpus", annotated, "stats", "-f", "json").stdout)
    assert {"year": 2025, "count": 1} in stats["years"]
    assert {"tag": "toread", "count": 2} in stats["tags"]
    assert {"venue": "NeurIPS", "count": 1} in stats["venues"]


# --- 4. honest formats -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("stats", "--format", "bibtex"),
        ("config", "--format", "ris"),
        ("index", "--status", "--format", "markdown"),
        ("list", "--format", "docx"),
    ],
)
def test_a_format_a_command_cannot_produce_is_a_usage_error(args):
    result = run(*args, code=2)
    assert result.stdout == ""
    assert "is not one of" in result.stderr and "'json'" in result.stderr


def test_report_formats_work():
    for command in (("stats",), ("config",), ("index", "--status")):
        for fmt in ("table", "tsv", "json", "yaml"):
            assert run(*command, "-f", fmt).stdout


def test_export_refuses_a_table_file_and_options_tsv_cannot_honour(tmp_path):
    target = tmp_path / "out.txt"
    result = run("export", "--format", "table", "-o", target, code=2)
    assert "table" in result.stderr and not target.exists()
    refused = run("export", "--format", "tsv", "--ascii", code=2)
    assert refused.stdout == "" and "--ascii applies to --format bibtex" in refused.stderr
    run("export", "--format", "ids", "--excel", code=2)


def test_dash_output_is_stdout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("export", "qerl", "-f", "ids", "-o", "-")
    assert len(result.stdout.split()) >= 1 and not (tmp_path / "-").exists()


# --- 5. one TSV schema -------------------------------------------------------------------------


def test_search_and_list_print_the_same_columns():
    listed = {line.split("\t")[0]: line for line in run("list", "--header").stdout.splitlines()[1:]}
    header, *rows = run("search", "entropy", "--header").stdout.splitlines()
    assert header.split("\t") == list(TSV_COLUMNS)
    assert rows and all(listed[row.split("\t")[0]] == row for row in rows)
    scored_header, *scored = run("search", "entropy", "--header", "--scores").stdout.splitlines()
    assert scored_header.split("\t") == [*TSV_COLUMNS, "score"]
    for row in scored:
        *fields, score = row.split("\t")
        assert "\t".join(fields) == listed[fields[0]] and float(score) > 0


def test_header_for_ids_and_the_guide_documents_the_columns():
    from .conftest import ROOT

    assert run("list", "-f", "ids", "--header").stdout.splitlines()[0] == "id"
    guide = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    assert "`" + "`, `".join(TSV_COLUMNS) + "`" in guide


# --- 6. papercuts ------------------------------------------------------------------------------


def test_corpus_and_index_dir_may_follow_the_command(tmp_path):
    (tmp_path / "mine.txt").write_text(
        "Topic\n\nWe propose CuriousRL, a curiosity method. It works.\n"
    )
    index = tmp_path / "ix"
    hits = run("search", "curiosity", "--corpus", tmp_path / "mine.txt", "--index-dir", index)
    assert "curiousrl" in hits.stdout and index.is_dir()
    equals = run("search", "curiosity", f"--corpus={tmp_path / 'mine.txt'}", "-f", "ids")
    assert len(equals.stdout.split()) == 1
    real = _cli("list", "--corpus", str(tmp_path / "mine.txt"), "-f", "ids")
    assert real.returncode == 0 and len(real.stdout.split()) == 1
    # the short form after the command is not a global option (it would swallow query words)
    run("search", "curiosity", "-c", tmp_path, code=2)
    # a query word after -- is left alone: it reaches the query (where a leading - excludes)
    result = run("search", "--", "entropy", "--corpus", code=0)
    assert result.stdout and "corpus" not in result.stderr


def test_encoding_may_follow_the_command_as_the_binary_file_error_asks(tmp_path):
    """The binary-file error says "give its encoding with --encoding"; a newcomer writes it
    after the file (``parse x.txt --encoding utf-16-le``), as --corpus may be written."""
    text = "Topic\n\nWe propose CuriousRL, a curiosity method for sparse rewards. It works.\n"
    path = tmp_path / "wide.txt"
    path.write_bytes(text.encode("utf-16-le"))
    before = run("--encoding", "utf-16-le", "parse", path, "-f", "ids").stdout
    assert run("parse", path, "--encoding", "utf-16-le", "-f", "ids").stdout == before
    listed = run("list", "--corpus", path, "--encoding=utf-16-le", "-f", "ids").stdout
    assert listed == before and len(before.split()) == 1


def test_show_of_an_empty_list_is_nothing_found_as_export_is():
    """``rlpapers search nomatch -f ids | rlpapers show -``: show printed nothing (not even the
    ``[]`` of JSON) and exited 0, while ``export --ids -`` of the same empty list says "no
    papers match", exit 1 (guide: nothing found is exit 1)."""
    for given in ("", "\n\n"):
        result = run("show", "-", "-f", "json", input=given, code=1)
        assert result.stdout == "" and "no papers match" in result.stderr
        assert "no papers match" in run("export", "--ids", "-", input=given, code=1).stderr


def test_a_mistyped_command_suggests_once():
    result = _cli("serach", "entropy")
    assert result.returncode == 2 and result.stderr.count("Did you mean 'search'?") == 1


def test_a_hit_found_by_author_shows_that_author(on_a_terminal):
    out = run("search", "author:Bengio", "-f", "table").stdout
    assert "Yun, St-Charles, …, Bengio, …" in out
    plain = run("search", "red-teaming", "-f", "table", "--limit", "1").stdout
    assert "Bengio" not in plain


def test_short_authors_with_matched_authors():
    from rlpapers.model import Paper

    paper = Paper(id="x", abstract="a", authors=("Ann Lee", "Bo Kim", "Cy Po", "Dana Wu"))
    assert render.short_authors(paper) == "Lee, Kim et al."
    assert render.short_authors(paper, matched=("Dana Wu",)) == "Lee, Kim, …, Wu"
    assert render.short_authors(paper, matched=("Cy Po",)) == "Lee, Kim, …, Po, …"
    assert render.short_authors(paper, matched=("Ann Lee",)) == "Lee, Kim et al."


def test_stats_terms_leave_out_latex_commands():
    terms = [
        t["term"] for t in json.loads(run("stats", "-f", "json", "--top", "40").stdout)["terms"]
    ]
    assert terms and not {"sigma", "mathcal", "tilde", "textbf", "sqrt"} & set(terms)


def test_the_guide_documents_rlpapers_config():
    from .conftest import ROOT

    assert "RLPAPERS_CONFIG" in (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")


def _searches_asked(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The limit of every Whoosh search the index runs from now on (None: every match)."""
    import rlpapers.index as index

    limits: list[object] = []
    real = index.Index._search
    monkeypatch.setattr(
        index.Index,
        "_search",
        lambda self, q, limit, exact=False, **rest: (
            limits.append(limit) or real(self, q, limit, exact, **rest)
        ),
    )
    return limits


@pytest.mark.parametrize("query", ["learning", "reinforcement learning"])
def test_a_pipe_gets_its_first_page_before_every_match_is_ranked(monkeypatch, query):
    """An unlimited search takes a first page from Whoosh's top-k search and ranks every match
    only when the reader wants more: ``search X | head`` never pays for the full ranking."""
    import rlpapers.index as index
    from rlpapers.index.ranking import RERANK_WINDOW
    from rlpapers.library import Library

    lib = Library()
    everything = [(h.paper.id, round(h.score, 6)) for h in lib.search(query, limit=None)]
    monkeypatch.setattr(index, "FIRST_PAGE", 10)  # the store is read 10 records first
    monkeypatch.setattr(index, "RANK_ALL_UPTO", 0)  # as if the words were found in many papers
    page = 10 if " " not in query else max(10, RERANK_WINDOW)
    assert len(everything) > page
    limits = _searches_asked(monkeypatch)
    hits = lib.iter_search(query, limit=None, snippets=False)
    first = [next(hits) for _ in range(10)]
    assert limits == [page]  # no full ranking yet
    rest = list(hits)
    assert limits == [page, None]
    paged = [(h.paper.id, round(h.score, 6)) for h in first + rest]
    assert paged == everything


@pytest.mark.parametrize(
    ("query", "most", "limits"),
    [
        ("learning", 10_000, [None]),  # few matches: ranked once, all of them
        ("learning", 3, [10, None]),  # more than ``most``: a first page, then the rest
        ("learn*", 10_000, [10, None]),  # a prefix's matches are not known before it runs
        ("modl~", 10_000, [10, None]),  # nor a fuzzy term's
        ('"language model"', 10_000, [None]),  # a phrase's words count
        ('"language model"', 30, [10, None]),
    ],
)
def test_an_unlimited_search_of_few_matches_ranks_them_once(monkeypatch, query, most, limits):
    import rlpapers.index as index
    from rlpapers.library import Library

    lib = Library()
    everything = [h.paper.id for h in lib.search(query, limit=None)]
    monkeypatch.setattr(index, "FIRST_PAGE", 10)
    monkeypatch.setattr(index, "RANK_ALL_UPTO", most)
    asked = _searches_asked(monkeypatch)
    assert list(lib.search_ids(query, limit=None)) == everything
    assert asked == limits


def test_a_usage_error_is_one_line_with_a_hint(seeds_copy):
    """Click printed three lines (usage, a "Try" line, the error); -c after the command got
    no suggestion."""
    late = run("search", "entropy", "-c", seeds_copy, code=2)
    assert late.stderr.count("\n") == 1 and late.stdout == ""
    assert "write --corpus" in late.stderr and "'rlpapers search --help'" in late.stderr
    typo = run("lst", code=2)
    assert (
        typo.stderr
        == "error: No such command 'lst'. Did you mean 'list'? (see 'rlpapers --help')\n"
    )
    bad = run("list", "--format", "docx", code=2)
    assert bad.stderr.count("\n") == 1 and "'docx' is not one of" in bad.stderr


def test_a_short_id_prefix_says_how_long_a_prefix_must_be():
    result = run("show", "7ig", code=1)
    assert "an id prefix needs at least 4 characters" in result.stderr


def test_keys_lists_id_key_and_file():
    """keys printed the 10-column paper TSV, though its help says id and citation key."""
    lines = run("keys", "-f", "tsv").stdout.splitlines()
    assert len(lines) == 40 and all(len(line.split("\t")) == 3 for line in lines)
    assert any(line.split("\t")[1] == "zhan_tecrl" for line in lines)
    assert lines[0].split("\t")[2].endswith(".txt")


def test_an_unknown_reference_is_one_error_line_in_every_command(tmp_path):
    """Observed: ``show qer`` said "error: no paper …" and ``similar qer`` "note: no paper …",
    both exit 1. An unknown reference is named the same way wherever it is given."""
    ids = tmp_path / "ids.txt"
    ids.write_text("qer\n", encoding="utf-8")
    lines = {
        " ".join(args): run(*args, code=1).stderr
        for args in (("show", "qer"), ("similar", "qer"), ("export", "--ids", str(ids)))
    }
    expected = "error: no paper with id or key 'qer'; did you mean \"qerl\"?\n"
    assert set(lines.values()) == {expected}, lines


def test_list_of_ids_reads_no_record(monkeypatch):
    """``list -f ids`` of every paper takes the ids from the store's index, in the order
    ``list -f tsv`` prints them, without decoding a record (1.7x slower at 10k once records
    were compressed, when it decoded every one)."""
    tsv = [line.split("\t")[0] for line in run("list", "-f", "tsv").stdout.splitlines()]

    def refuse(data: object) -> None:
        raise AssertionError("a record was decoded")

    monkeypatch.setattr("rlpapers.store.reads.paper_of", refuse)
    assert run("list", "-f", "ids").stdout.split() == tsv
    assert run("list", "-f", "ids", "--limit", "3", "--header").stdout.split() == ["id", *tsv[:3]]
