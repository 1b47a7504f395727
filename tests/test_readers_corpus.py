"""Bibliography files as corpus files, through the CLI: found by title, author, venue and
year; the file's own keys kept as if pinned; a text file's paper and a bibliography entry with
its abstract are one record; export -> read back -> export is a fixed point from the second
round (golden files); hostile files warn and keep the other entries."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from .conftest import DATA, SEEDS, run

GOLDEN = DATA / "readers"

REFS = r"""@article{mueller2020deep,
  title = {Maximum Entropy {RL} for {\"U}ber-Agents},
  author = {M{\"u}ller, Hans and de la Fontaine, Jean},
  journal = {Journal of {RL}},
  year = {2020},
  doi = {10.1234/abc},
  keywords = {exploration, entropy}
}

@inproceedings{smith2019,
  title = {Policy Gradients Revisited},
  author = {Smith, John},
  booktitle = {NeurIPS},
  year = 2019,
  abstract = {We revisit policy gradients with entropy bonuses.}
}
"""


@pytest.fixture
def refs(tmp_path):
    folder = tmp_path / "lib"
    folder.mkdir()
    (folder / "refs.bib").write_text(REFS, encoding="utf-8")
    return folder


def ids(*args: str, code: int = 0) -> list[str]:
    return run(*args, "-f", "ids", code=code).stdout.split()


def keys(corpus, *args: str) -> list[str]:
    out = run("--corpus", corpus, "list", *args, "-f", "json").stdout
    return [p["key"] for p in json.loads(out)]


def test_bib_entries_are_found_by_title_author_venue_and_year(refs):
    corpus = refs / "refs.bib"
    found = run("--corpus", corpus, "search", "entropy", "-f", "json").stdout
    hits = {h["key"]: h for h in json.loads(found)}  # one by its title, one by its abstract
    assert sorted(hits) == ["mueller2020deep", "smith2019"]
    import rlpapers

    with rlpapers.Library(corpus=[corpus]) as library:
        (hit,) = library.search("maximum", limit=1)
    assert hit.snippet == "Maximum Entropy RL for Über-Agents"  # from the title
    assert hits["mueller2020deep"]["venue"] == "Journal of RL"
    assert hits["mueller2020deep"]["year"] == 2020
    assert ids("--corpus", corpus, "search", "author:müller") == ids(
        "--corpus", corpus, "search", "key:mueller2020deep"
    )
    assert len(ids("--corpus", corpus, "search", "venue:neurips")) == 1
    assert keys(corpus, "--year", "2020") == ["mueller2020deep"]
    shown = run("--corpus", corpus, "show", "mueller2020deep", "-f", "json").stdout
    assert "10.1234/abc" in shown and "Journal of RL" in shown
    stats = run("--corpus", corpus, "stats", "-f", "json").stdout
    assert "Journal of RL" in stats and "exploration" in stats


def test_similar_for_an_entry_without_an_abstract(refs):
    run("--corpus", refs, "--corpus", SEEDS, "similar", "mueller2020deep", "-f", "ids")
    run("--corpus", refs / "refs.bib", "similar", "mueller2020deep", code=1)


def test_a_files_keys_are_kept_and_clashes_are_errors(refs):
    assert keys(refs) == ["mueller2020deep", "smith2019"]
    other = refs / "other.bib"
    other.write_text("@misc{smith2019, title={Another Paper}, year=2001}\n", encoding="utf-8")
    err = run("--corpus", refs, "list", code=2).stderr
    assert "key 'smith2019' is given to two papers" in err
    assert "refs.bib:10" in err and "other.bib:1" in err
    other.unlink()
    assert keys(refs) == ["mueller2020deep", "smith2019"]  # nothing changed meanwhile


def test_a_key_the_ledger_holds_for_another_paper_is_an_error(refs):
    assert keys(refs) == ["mueller2020deep", "smith2019"]
    bib = refs / "refs.bib"
    bib.write_text(REFS.replace("{smith2019,", "{smith2019new,"), encoding="utf-8")
    assert keys(refs) == ["mueller2020deep", "smith2019new"]
    bib.write_text(
        REFS.replace("{smith2019,", "{smith2019new,") + "@misc{smith2019, title={Other}}\n",
        encoding="utf-8",
    )
    err = run("--corpus", refs, "list", code=2).stderr
    assert "key 'smith2019' already belongs to paper" in err and "refs.bib:17" in err
    bib.write_text(REFS.replace("{smith2019,", "{smith2019new,"), encoding="utf-8")
    assert keys(refs) == ["mueller2020deep", "smith2019new"]
    assert ids("--corpus", refs, "show", "smith2019")  # a former key still names the paper


def test_a_text_papers_bib_entry_with_its_abstract_is_one_record(tmp_path):
    corpus = tmp_path / "c"
    shutil.copytree(SEEDS, corpus)
    papers = json.loads(run("--corpus", corpus, "export", "-f", "json").stdout)
    first = papers[0]
    bib = (
        f"@article{{mine, title = {{A Real Title}}, year = 2025, journal = {{ICLR}},\n"
        f"  abstract = {{{first['abstract']}}}}}\n"
    )
    (corpus / "mine.bib").write_text(bib, encoding="utf-8")
    merged = json.loads(run("--corpus", corpus, "export", "-f", "json").stdout)
    assert len(merged) == len(papers)
    record = next(p for p in merged if p["id"] == first["id"])
    assert record["sources"] == [*first["sources"], "mine.bib:1"]
    assert (record["title"], record["year"], record["venue"], record["title_derived"]) == (
        "A Real Title",
        2025,
        "ICLR",
        False,
    )
    assert record["key"] == "mine" and record["authors"] == first["authors"]


@pytest.mark.parametrize(
    "fmt, name", [("bibtex", "lib.bib"), ("ris", "lib.ris"), ("csljson", "lib.json")]
)
def test_export_read_back_export_is_a_fixed_point(tmp_path, fmt, name):
    """Round one exports the seeds; rounds two and three export what the file of the round
    before holds, read as a corpus. Round two is a golden file, round three equals it."""
    library = tmp_path / "library"
    library.mkdir()
    target = library / name
    target.write_text(run("--corpus", SEEDS, "export", "-f", fmt).stdout, encoding="utf-8")
    rounds = []
    for _ in range(2):
        out = run("--corpus", target, "export", "-f", fmt).stdout
        target.write_text(out, encoding="utf-8")
        rounds.append(out)
    golden = GOLDEN / f"seeds.round2.{name.split('.', 1)[1]}"
    if os.environ.get("RLPAPERS_REGEN"):
        golden.write_text(rounds[0], encoding="utf-8")
    assert rounds[0] == golden.read_text(encoding="utf-8")
    assert rounds[1] == rounds[0]
    seeds = json.loads(run("--corpus", SEEDS, "export", "-f", "json").stdout)
    back = json.loads(run("--corpus", target, "export", "-f", "json").stdout)
    assert [p["key"] for p in back] == [p["key"] for p in seeds]
    assert [p["id"] for p in back] == [p["id"] for p in seeds]  # the ledger's papers, by key
    assert [p["authors"] for p in back] == [p["authors"] for p in seeds]


def test_independent_readers_accept_the_round_trip(tmp_path):
    import bibtexparser
    import pybtex.database

    target = tmp_path / "lib.bib"
    target.write_text(run("--corpus", SEEDS, "export", "-f", "bibtex").stdout, encoding="utf-8")
    out = run("--corpus", target, "export", "-f", "bibtex").stdout
    assert len(bibtexparser.parse_string(out).entries) == 40
    assert len(pybtex.database.parse_string(out, "bibtex").entries) == 40
    csl = tmp_path / "lib.json"
    csl.write_text(run("--corpus", target, "export", "-f", "csljson").stdout, encoding="utf-8")
    assert len(json.loads(csl.read_text(encoding="utf-8"))) == 40


def test_citeproc_formats_the_read_back_csl_json(tmp_path):
    """An independent CSL processor (citeproc-py, its bundled style) reads what a CSL-JSON
    library read back and exported again holds: every paper, with its title and year."""
    import warnings

    from citeproc import (
        Citation,
        CitationItem,
        CitationStylesBibliography,
        CitationStylesStyle,
        formatter,
    )
    from citeproc.source.json import CiteProcJSON

    library = tmp_path / "lib.json"
    first = (
        '[{"id": "lee2024", "type": "article-journal", "title": "Entropy in RL", '
        '"author": [{"family": "Lee", "given": "Ann"}], "issued": {"date-parts": [[2024]]}}]'
    )
    library.write_text(first, encoding="utf-8")
    seeds = tmp_path / "seeds.json"
    seeds.write_text(run("--corpus", SEEDS, "export", "-f", "csljson").stdout, encoding="utf-8")
    items = json.loads(
        run("--corpus", library, "--corpus", seeds, "export", "-f", "csljson").stdout
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # citeproc-py warns about CSL fields it does not know
        style = CitationStylesStyle("harvard-cite-them-right", validate=False)
        bibliography = CitationStylesBibliography(style, CiteProcJSON(items), formatter.plain)
        for item in items:
            bibliography.register(Citation([CitationItem(item["id"])]))
        rendered = [str(entry) for entry in bibliography.bibliography()]
    assert len(rendered) == 41
    assert any("Lee, A. (2024)" in entry and "Entropy in RL" in entry for entry in rendered)


def test_ris_in_bibtex_out_keeps_the_fields_both_have(tmp_path):
    ris = tmp_path / "lib.ris"
    ris.write_text(
        "TY  - JOUR\nID  - lee2021\nTI  - Entropy Bonuses\nAU  - Lee, Ann\nPY  - 2021\n"
        "T2  - JMLR\nAB  - We add entropy.\nKW  - rl\nUR  - https://example.org/x\nDO  - 10.1/y\n"
        "ER  -\n",
        encoding="utf-8",
    )
    out = run("--corpus", ris, "export", "-f", "bibtex").stdout
    for field in ("@misc{lee2021,", "author = {Ann Lee}", "title = {Entropy Bonuses}", "year = {2021}",
                  "howpublished = {JMLR}", "doi = {10.1/y}", "url = {https://example.org/x}",
                  "keywords = {rl}", "abstract = {We add entropy.}"):  # fmt: skip
        assert field in out, field


def test_hostile_files_warn_with_file_and_line_and_keep_the_rest(tmp_path):
    corpus = tmp_path / "hostile"
    corpus.mkdir()
    (corpus / "a.bib").write_text(
        "@misc{ok1, title={First Entry}}\n@misc{bad,\n  title = {Unbalanced { brace,\n}\n"
        "@misc{ok1, title={Duplicate Key}}\n@misc{ok2, title={Last Entry}, journal = undefined}\n",
        encoding="utf-8",
    )
    (corpus / "b.ris").write_bytes(
        b"\xef\xbb\xbfTY  - GEN\r\nTI  - Ris Entry\r\nER  -\r\nTY  - GEN\r\nTI  - Open Entry\r\n"
    )
    good = json.dumps({"id": "2503.11111", "title": "Json Entry", "authors": [], "abstract": "A."})
    (corpus / "c.jsonl").write_text(good + "\n{broken\n", encoding="utf-8")
    (corpus / "package.json").write_text('{"name": "x"}', encoding="utf-8")
    result = run("--corpus", corpus, "list", "-f", "json")
    titles = sorted(p["title"] for p in json.loads(result.stdout))
    assert titles == [
        "Duplicate Key",
        "First Entry",
        "Json Entry",
        "Last Entry",
        "Open Entry",
        "Ris Entry",
    ]
    for where in ("a.bib:2: entry not read", "a.bib:5: duplicate key 'ok1'", "a.bib:6: undefined @string macro",
                  "b.ris:4: record without an ER line", "c.jsonl:2: not a JSON line", "package.json: not CSL-JSON"):  # fmt: skip
        assert where in result.stderr, (where, result.stderr)


def test_editing_an_entry_keeps_its_id_and_key(refs):
    before = json.loads(run("--corpus", refs, "list", "-f", "json").stdout)
    bib = refs / "refs.bib"
    edited = REFS.replace("Maximum Entropy", "Max-Entropy").replace(  # a new abstract: the
        "We revisit policy gradients with entropy bonuses.",  # key says which paper it is
        "Chess engines search game trees with alpha-beta pruning and baselines.",
    )
    bib.write_text(edited, encoding="utf-8")
    after = json.loads(run("--corpus", refs, "list", "-f", "json").stdout)
    assert [(p["id"], p["key"]) for p in after] == [(p["id"], p["key"]) for p in before]
    assert after[0]["title"].startswith("Max-Entropy") and after[1]["abstract"].endswith(
        "baselines."
    )


def test_parse_reads_a_bibliography_file_by_its_extension(refs):
    out = json.loads(run("parse", refs / "refs.bib", "-f", "json").stdout)
    assert [p["title"] for p in out] == [
        "Maximum Entropy RL for Über-Agents",
        "Policy Gradients Revisited",
    ]
    assert [p["key"] for p in out] == ["mueller2020deep", "smith2019"]


def test_semantic_modes_use_an_entry_title(refs):
    pytest.importorskip("onnxruntime")
    corpus = refs / "refs.bib"
    found = ids("--corpus", corpus, "search", "maximum entropy agents", "--mode", "semantic")
    assert found[0] == ids("--corpus", corpus, "show", "mueller2020deep")[0]
    assert len(ids("--corpus", corpus, "similar", "mueller2020deep", "--mode", "semantic")) == 1


def test_a_key_another_corpus_gives_a_different_paper_is_an_error(refs, tmp_path):
    """Two corpora share the ledger. A library of another corpus that gives one of this
    corpus's keys to a paper with another text is refused; the same paper, its text a little
    changed (as an export and a read back change it), is that paper."""
    assert keys(refs) == ["mueller2020deep", "smith2019"]
    other = tmp_path / "other"
    other.mkdir()
    bib = other / "theirs.bib"
    bib.write_text(
        "@misc{smith2019, title={T}, abstract={Chess engines prune game trees.}}\n",
        encoding="utf-8",
    )
    err = run("--corpus", other, "list", code=2).stderr
    assert "key 'smith2019' already belongs to paper" in err and "theirs.bib:1" in err
    same = "@misc{smith2019, title={T}, abstract={We \\emph{revisit} policy gradients with entropy bonuses!}}\n"
    bib.write_text(same, encoding="utf-8")
    mine = json.loads(run("--corpus", refs, "list", "-f", "json").stdout)[1]
    theirs = json.loads(run("--corpus", other, "list", "-f", "json").stdout)[0]
    assert (theirs["id"], theirs["key"]) == (mine["id"], "smith2019")
