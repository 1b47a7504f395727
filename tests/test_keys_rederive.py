"""Re-keying on request: what ``keys --rederive`` proposes, and old keys in queries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlpapers import Library
from rlpapers.errors import ParseWarning
from rlpapers.key_format import parse_format
from rlpapers.model import Paper
from rlpapers.old_keys import Rekey, proposals, with_current_keys
from rlpapers.parse import paper_id
from rlpapers.querylang import lex

from .conftest import run


def _paper(pid: str, key: str, **fields: object) -> Paper:
    return Paper(**{"id": pid, "abstract": "a", "key": key, **fields})  # type: ignore[arg-type]


def test_proposals_skip_pinned_papers_and_keys_already_right():
    papers = [
        _paper("p1", "cheng_minimal", title="Reasoning with Exploration", authors=("D Cheng",),
               year=2025),
        _paper("p2", "zhan2025tecrl", name="TECRL", authors=("G Zhan",), year=2025),
        _paper("p3", "mine", title="Pinned work", authors=("A Lee",), year=2024),
    ]  # fmt: skip
    found = proposals(papers, {"p3"}, lambda key: None)
    assert found == [Rekey("p1", "cheng_minimal", "cheng2025reasoning")]


def test_a_new_key_never_takes_one_another_paper_holds_or_held():
    held = {"cheng2025reasoning": "other", "cheng2025reasoningb": "p1"}
    paper = _paper("p1", "cheng_minimal", title="Reasoning", authors=("D Cheng",), year=2025)
    twin = _paper("p2", "cheng_x", title="Reasoning", authors=("D Cheng",), year=2025)
    found = proposals([paper, twin], set(), held.get)
    # p1 takes back a key it once held; p2 takes the next free one
    assert found == [
        Rekey("p1", "cheng_minimal", "cheng2025reasoningb"),
        Rekey("p2", "cheng_x", "cheng2025reasoningc"),
    ]


def test_proposals_follow_a_users_format():
    paper = _paper("p1", "cheng_minimal", title="Reasoning", authors=("D Cheng",), year=2025)
    found = proposals([paper], set(), lambda key: None, parse_format("{auth}:{year}"))
    assert found == [Rekey("p1", "cheng_minimal", "cheng:2025")]


def test_old_keys_in_a_query_become_current_keys():
    current = {"cheng_minimal": "cheng2025reasoning"}.get

    def rewritten(query: str) -> str:
        return with_current_keys(query, lex(query), current)

    assert rewritten("key:cheng_minimal") == "key:cheng2025reasoning"
    assert rewritten("entropy -KEY:cheng_minimal") == "entropy -KEY:cheng2025reasoning"
    assert rewritten("(key:cheng_minimal OR x)") == "(key:cheng2025reasoning OR x)"
    assert rewritten("key:cheng_minimal key:cheng_minimal") == (
        "key:cheng2025reasoning key:cheng2025reasoning"
    )
    kept = ("key:cheng_min*", "title:cheng_minimal", "key:other", 'key:"cheng_minimal"')
    for query in (*kept, 'title:"a key:cheng_minimal"', '"key:cheng_minimal"'):
        assert rewritten(query) == query  # a phrase is text, not a key to look up


# --- the command ---------------------------------------------------------------------------------

CHENG = (
    "We study minimal policies for sparse-reward control and show that a small entropy bonus "
    "suffices across many benchmark tasks with strong empirical results in every setting."
)
LOVELACE = (
    "We propose sparsification of attention maps for sparse-reward control with an entropy "
    "bonus and show gains on many benchmark tasks with strong empirical results."
)


def _library(tmp_path: Path) -> tuple[Path, str]:
    """A corpus of two papers keyed without a year; then metadata by id gives the first its
    real title and year. Returns the corpus and the first paper's key."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text(
        f"Papers\n\nDaixuan Cheng\n\n{CHENG}\n\nAda Lovelace\n\n{LOVELACE}\n", encoding="utf-8"
    )
    old = _keys(corpus)[paper_id(CHENG)]
    meta = f"{paper_id(CHENG)}:\n  title: 'Reasoning with Exploration'\n  year: 2025\n"
    (corpus / "metadata.yaml").write_text(meta, encoding="utf-8")
    return corpus, old


def _keys(corpus: Path) -> dict[str, str]:
    with Library([corpus]) as lib:
        return {p.id: p.key for p in lib.papers}


def test_rederive_is_a_dry_run_and_apply_gives_the_new_keys(tmp_path):
    corpus, old = _library(tmp_path)
    assert old.startswith("cheng_") and _keys(corpus)[paper_id(CHENG)] == old  # never moved
    shown = run("--corpus", corpus, "keys", "--rederive", "-f", "tsv")
    assert shown.stdout == f"{paper_id(CHENG)}\t{old}\tcheng2025reasoning\n"
    assert "would change" in shown.stderr
    assert _keys(corpus)[paper_id(CHENG)] == old  # a dry run changes nothing
    applied = run("--corpus", corpus, "keys", "--rederive", "--apply", "-f", "tsv")
    assert applied.stdout == shown.stdout and "gave 1 key" in applied.stderr
    assert _keys(corpus)[paper_id(CHENG)] == "cheng2025reasoning"
    again = run("--corpus", corpus, "keys", "--rederive", "-f", "tsv")
    assert again.stdout == "" and "already" in again.stderr


def test_an_old_key_keeps_finding_its_paper_and_no_export_prints_it(tmp_path):
    corpus, old = _library(tmp_path)
    run("--corpus", corpus, "keys", "--rederive", "--apply")
    new = "cheng2025reasoning"
    assert run("--corpus", corpus, "show", old, "-f", "ids").stdout.split() == [paper_id(CHENG)]
    ids = tmp_path / "ids.txt"
    ids.write_text(f"{old}\n", encoding="utf-8")
    bib = run("--corpus", corpus, "export", "--ids", ids, "-f", "bibtex").stdout
    assert f"{{{new}," in bib and old not in bib
    by_old = run("--corpus", corpus, "similar", old, "-f", "ids", code=1)  # two papers only
    by_new = run("--corpus", corpus, "similar", new, "-f", "ids", code=1)
    assert (by_old.stdout, by_old.stderr) == (by_new.stdout, by_new.stderr)
    assert "no paper with" not in by_old.stderr
    found = run("--corpus", corpus, "search", f"key:{old}", "-f", "ids")
    assert found.stdout.split() == [paper_id(CHENG)]
    assert run("--corpus", corpus, "search", f"entropy -key:{old}", "-f", "ids").stdout.split() == [
        paper_id(LOVELACE)
    ]
    hits = run("--corpus", corpus, "search", f"key:{old}", "-f", "tsv").stdout
    assert new in hits and old not in hits  # the search view holds the new key
    for fmt in ("bibtex", "json", "csv", "ris", "csljson", "yaml", "markdown", "jsonl", "tsv"):
        out = run("--corpus", corpus, "export", "-f", fmt).stdout
        assert old not in out and new in out, fmt


def test_rederive_leaves_pinned_keys_alone(tmp_path):
    corpus, old = _library(tmp_path)
    (corpus / "keys.yaml").write_text(f"{old}:\n  key: {old}\n", encoding="utf-8")
    result = run("--corpus", corpus, "keys", "--rederive", "--apply", "-f", "tsv")
    assert result.stdout == ""
    assert _keys(corpus)[paper_id(CHENG)] == old


def test_apply_without_rederive_is_a_usage_error():
    result = run("keys", "--apply", code=2)
    assert "--rederive" in result.stderr


def test_rederive_leaves_a_bibliography_entrys_own_key_alone(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "refs.bib").write_text(
        "@article{myown,\n  title = {Reasoning with Exploration},\n  author = {Cheng, Daixuan},\n"
        f"  year = {{2025}},\n  abstract = {{{CHENG}}}\n}}\n",
        encoding="utf-8",
    )
    assert list(_keys(corpus).values()) == ["myown"]
    result = run("--corpus", corpus, "keys", "--rederive", "-f", "tsv")
    assert result.stdout == "" and "already" in result.stderr


def test_old_keys_travel_with_keys_yaml_to_a_fresh_data_folder(tmp_path, monkeypatch):
    """Observed: after ``keys --rederive --apply`` and ``keys --pin``, a fresh data folder
    (another machine) knew only the new key: metadata naming the paper by its old key was
    ignored (its year and venue lost) and a draft's old key found nothing. ``keys --pin``
    writes the keys a paper had as its ``old_keys``; a refresh keeps them as old keys."""
    corpus, old = _library(tmp_path)
    with (corpus / "metadata.yaml").open("a", encoding="utf-8") as out:
        out.write(f"{old}:\n  venue: COLT\n")
    run("--corpus", corpus, "keys", "--rederive", "--apply")
    run("--corpus", corpus, "keys", "--pin")
    pinned = (corpus / "keys.yaml").read_text(encoding="utf-8")
    assert f"{paper_id(CHENG)}: {{key: cheng2025reasoning, old_keys: [{old}]}}" in pinned
    monkeypatch.setenv("RLPAPERS_DATA_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("RLPAPERS_INDEX_DIR", str(tmp_path / "elsewhere-cache"))
    listed = run("--corpus", corpus, "list", "-f", "json")
    assert "no paper with id or key" not in listed.stderr
    paper = next(p for p in json.loads(listed.stdout) if p["id"] == paper_id(CHENG))
    assert (paper["key"], paper["venue"], paper["year"]) == ("cheng2025reasoning", "COLT", 2025)
    assert run("--corpus", corpus, "show", old, "-f", "ids").stdout.split() == [paper_id(CHENG)]
    run("--corpus", corpus, "keys", "--pin")
    assert (corpus / "keys.yaml").read_text(encoding="utf-8") == pinned  # pinning again: same


def test_an_old_key_another_paper_has_stays_that_papers(tmp_path):
    """``old_keys`` never takes a key from the paper that has it: a warning names the entry."""
    corpus, old = _library(tmp_path)
    other = _keys(corpus)[paper_id(LOVELACE)]
    (corpus / "keys.yaml").write_text(
        f"{paper_id(CHENG)}: {{old_keys: [{other}, cheng_older]}}\n", encoding="utf-8"
    )
    with pytest.warns(ParseWarning, match=rf"keys.yaml:1: old key '{other}' of paper"):
        keys = _keys(corpus)
    assert keys == {paper_id(CHENG): old, paper_id(LOVELACE): other}
    ids = run("--corpus", corpus, "show", "cheng_older", "-f", "ids").stdout.split()
    assert ids == [paper_id(CHENG)]
    assert run("--corpus", corpus, "show", other, "-f", "ids").stdout.split() == [
        paper_id(LOVELACE)
    ]
