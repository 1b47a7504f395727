"""One paper in a text file and a bibliography file: joined into one record by DOI, arXiv id or
real title and first author, under the id given first and the entry's key; the join is kept
in the ledger, so edits, deleted files, renamed files and a cleared cache never move the id
or the key."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from rlpapers import Library

from .conftest import run

TEXT = (
    "Deep Learning · Reinforcement Learning\n\nYi Zhan, Bo Wang\n\n"
    "We propose TECRL, a trajectory entropy-constrained method for offline agents. "
    "It bounds the entropy of whole trajectories and improves stability on control suites.\n"
)
OTHER = (
    "Robotics\n\nAda Lovelace\n\n"
    "Chess engines search game trees with alpha-beta pruning, and we measure how deep "
    "searches scale with the number of cores on commodity machines.\n"
)
ENTRY = """@inproceedings{zhan2025tecrl,
  title = {Trajectory Entropy-Constrained {RL}},
  author = {Zhan, Yi and Wang, Bo},
  booktitle = {ICLR},
  year = {2025},
  FIELDS
}
"""


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    stamp = time.time() + 5  # a different mtime even on coarse file systems
    os.utime(path, (stamp, stamp))


def _entry(fields: str = "doi = {https://doi.org/10.1234/TECRL}") -> str:
    return ENTRY.replace("FIELDS", fields)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A text file of two papers; metadata gives the first a DOI."""
    folder = tmp_path / "c"
    folder.mkdir()
    _write(folder / "papers.txt", f"{TEXT}\n{OTHER}")
    _write(folder / "metadata.yaml", "zhan_tecrl:\n  doi: 10.1234/tecrl\n")
    return folder


def _records(folder: Path) -> list[dict]:
    return json.loads(run("--corpus", folder, "export", "-f", "json").stdout)


def _ids_keys(folder: Path) -> list[tuple[str, str]]:
    return sorted((p["id"], p["key"]) for p in _records(folder))


def _tecrl(folder: Path) -> dict:
    (found,) = [p for p in _records(folder) if "TECRL" in p["abstract"] or "10.1234" in p["doi"]]
    return found


def test_same_doi_is_one_record_with_both_sources_and_the_richer_fields(corpus):
    before = _tecrl(corpus)
    assert before["key"] == "zhan_tecrl"
    _write(corpus / "refs.bib", _entry())
    records = _records(corpus)
    assert len(records) == 2
    joined = _tecrl(corpus)
    assert joined["id"] == before["id"]  # the id given first
    assert joined["key"] == "zhan2025tecrl"  # the entry's own key, as if pinned
    assert joined["sources"] == ["papers.txt:5", "refs.bib:1"]
    assert joined["abstract"] == before["abstract"]  # from the text
    assert (joined["title"], joined["venue"], joined["year"], joined["title_derived"]) == (
        "Trajectory Entropy-Constrained RL",
        "ICLR",
        2025,
        False,
    )
    assert joined["doi"] == "10.1234/tecrl"  # the metadata's, which wins over both files
    shown = run("--corpus", corpus, "show", "zhan_tecrl", "-f", "table").stdout  # old key
    assert "papers.txt:5, refs.bib:1" in shown
    ids = run("--corpus", corpus, "show", "zhan2025tecrl", "-f", "ids").stdout.split()
    assert ids == [before["id"]]


def test_same_arxiv_id_is_one_record(corpus):
    _write(corpus / "metadata.yaml", "zhan_tecrl:\n  url: https://arxiv.org/abs/2501.01234v2\n")
    before = _tecrl(corpus)
    _write(corpus / "refs.bib", _entry("eprint = {2501.01234}, archiveprefix = {arXiv}"))
    records = _records(corpus)
    assert len(records) == 2
    joined = next(p for p in records if p["id"] == before["id"])
    assert joined["key"] == "zhan2025tecrl" and len(joined["sources"]) == 2


def test_same_real_title_and_first_author_is_one_record(corpus):
    title = "trajectory entropy–constrained RL"  # case, dash and braces differ
    _write(corpus / "metadata.yaml", f"zhan_tecrl:\n  title: '{title}'\n")
    before = _tecrl(corpus)
    _write(corpus / "refs.bib", _entry("note = {no DOI}"))
    records = _records(corpus)
    assert len(records) == 2
    joined = next(p for p in records if p["id"] == before["id"])
    assert joined["sources"] == ["papers.txt:5", "refs.bib:1"]
    assert joined["title"] == title  # the metadata wins over both files


def test_another_first_author_is_another_paper(corpus):
    _write(corpus / "metadata.yaml", "zhan_tecrl:\n  title: Trajectory Entropy-Constrained RL\n")
    entry = _entry("note = {x}").replace("Zhan, Yi and Wang, Bo", "Wang, Bo and Zhan, Yi")
    _write(corpus / "refs.bib", entry)
    records = _records(corpus)
    assert len(records) == 3
    assert all(len(p["sources"]) == 1 for p in records)


def test_a_title_derived_from_the_abstract_never_matches(corpus):
    derived = _tecrl(corpus)["title"]
    assert _tecrl(corpus)["title_derived"]
    _write(corpus / "metadata.yaml", "")
    entry = f"@misc{{same, title = {{{derived}}}, author = {{Zhan, Yi}}}}\n"
    _write(corpus / "refs.bib", entry)
    assert len(_records(corpus)) == 3


def test_both_new_at_once_take_the_text_papers_id(corpus, tmp_path):
    _write(corpus / "refs.bib", _entry())
    first = run("--corpus", corpus, "export", "-f", "json")
    assert "no paper with id or key" not in first.stderr  # the metadata names the text paper
    joined = _tecrl(corpus)
    from rlpapers.ids import paper_id

    abstract = TEXT.split("\n\n")[2].strip()
    assert joined["id"] == paper_id(abstract) and joined["key"] == "zhan2025tecrl"
    assert len(joined["sources"]) == 2
    # the key the metadata named it by, before it had one, still finds it
    assert run("--corpus", corpus, "show", "zhan_tecrl", "-f", "ids").stdout.split() == [
        joined["id"]
    ]


def test_an_entry_first_and_its_text_later_keep_the_entrys_id_and_key(corpus):
    _write(corpus / "papers.txt", OTHER)
    _write(corpus / "refs.bib", _entry())
    (alone,) = [p for p in _records(corpus) if p["key"] == "zhan2025tecrl"]
    assert alone["abstract"] == ""
    _write(corpus / "papers.txt", f"{TEXT}\n{OTHER}")  # new, its DOI from the metadata
    records = _records(corpus)
    assert len(records) == 2
    joined = next(p for p in records if p["key"] == "zhan2025tecrl")
    assert joined["id"] == alone["id"] and joined["abstract"].startswith("We propose TECRL")
    assert joined["sources"] == ["papers.txt:5", "refs.bib:1"]


def test_editing_the_entrys_title_keeps_id_and_key(corpus):
    _write(corpus / "refs.bib", _entry())
    before = _ids_keys(corpus)
    _write(corpus / "refs.bib", _entry().replace("Trajectory Entropy", "Trajectory-Entropy"))
    assert _ids_keys(corpus) == before
    assert _tecrl(corpus)["title"].startswith("Trajectory-Entropy")
    assert len(_tecrl(corpus)["sources"]) == 2


def test_editing_the_text_while_joined_keeps_id_key_and_join(corpus):
    _write(corpus / "refs.bib", _entry())
    before = _ids_keys(corpus)
    edited = TEXT.replace("control suites", "control benchmark suites")
    _write(corpus / "papers.txt", f"{edited}\n{OTHER}")
    assert _ids_keys(corpus) == before
    joined = _tecrl(corpus)
    assert "benchmark suites" in joined["abstract"] and len(joined["sources"]) == 2


def test_deleting_the_bib_file_leaves_the_text_paper_its_id_and_key(corpus):
    _write(corpus / "refs.bib", _entry())
    before = _ids_keys(corpus)
    (corpus / "refs.bib").unlink()
    assert _ids_keys(corpus) == before
    assert _tecrl(corpus)["sources"] == ["papers.txt:5"]
    _write(corpus / "refs.bib", _entry())  # back: joined again, nothing moved
    assert _ids_keys(corpus) == before and len(_tecrl(corpus)["sources"]) == 2


def test_deleting_the_text_leaves_the_entry_the_papers_id_and_key(corpus):
    _write(corpus / "refs.bib", _entry())
    joined = _tecrl(corpus)
    _write(corpus / "papers.txt", OTHER)
    alone = next(p for p in _records(corpus) if p["key"] == "zhan2025tecrl")
    assert alone["id"] == joined["id"] and alone["sources"] == ["refs.bib:1"]
    _write(corpus / "papers.txt", f"{TEXT}\n{OTHER}")
    assert _tecrl(corpus)["id"] == joined["id"] and len(_tecrl(corpus)["sources"]) == 2


def test_clearing_the_cache_and_renaming_files_keeps_everything(corpus, isolated, tmp_path):
    _write(corpus / "refs.bib", _entry())
    before = _ids_keys(corpus)
    # the metadata that matched them is gone: the ledger remembers the join
    _write(corpus / "metadata.yaml", "")
    shutil.rmtree(isolated / "index")
    moved = tmp_path / "moved"
    shutil.copytree(corpus, moved)
    (moved / "papers.txt").rename(moved / "zz-renamed.txt")
    (moved / "refs.bib").rename(moved / "aa-library.bib")
    assert _ids_keys(moved) == before
    joined = _tecrl(moved)
    assert joined["sources"] == ["zz-renamed.txt:5", "aa-library.bib:1"]  # text first
    scratch = Library([moved], index_dir=tmp_path / "scratch")
    assert scratch.get("zhan2025tecrl").id == joined["id"]


def test_two_papers_with_ids_already_stay_two_records(corpus):
    """Joining them would leave one of the two ids naming no record."""
    _write(corpus / "metadata.yaml", "")
    _write(corpus / "refs.bib", _entry())
    assert len(_records(corpus)) == 3  # no DOI in the text's metadata: two papers
    _write(corpus / "metadata.yaml", "zhan_tecrl:\n  doi: 10.1234/tecrl\n")
    assert len(_records(corpus)) == 3


def test_an_entry_never_continues_a_joined_paper_whose_text_left(corpus):
    """The paper's text left (the text file gone) while its entry stays: only a text paper may
    continue that text, never another entry, which would give two records one id."""
    _write(corpus / "refs.bib", _entry())
    joined = _tecrl(corpus)
    newcomer = OTHER.replace("Chess engines", "Go engines").replace("cores", "threads")
    _write(corpus / "papers.txt", f"{OTHER}\n{newcomer}")  # a new text paper beside
    edited = joined["abstract"].replace("control suites", "control benchmark suites")
    _write(corpus / "more.bib", f"@misc{{other2025, title = {{X}}, abstract = {{{edited}}}}}\n")
    records = _records(corpus)
    assert len({p["id"] for p in records}) == len(records) == 4
    assert next(p for p in records if p["key"] == "zhan2025tecrl")["id"] == joined["id"]


def test_metadata_names_a_new_text_paper_by_the_key_it_is_about_to_get(
    corpus, isolated, monkeypatch
):
    """Text, entry and metadata arrive together: the metadata names the text paper by the key
    the configured format is about to give it, and they are joined."""
    (isolated / "config.yaml").write_text('keys:\n  format: "{auth}-{title:2}"\n')
    monkeypatch.setenv("RLPAPERS_DATA_DIR", str(isolated / "trial"))
    (key,) = [p["key"] for p in _records(corpus) if "TECRL" in p["abstract"]]
    assert key != "zhan_tecrl"
    monkeypatch.setenv("RLPAPERS_DATA_DIR", str(isolated / "data"))
    shutil.rmtree(isolated / "index")
    _write(corpus / "metadata.yaml", f"{key}:\n  doi: 10.1234/tecrl\n")
    _write(corpus / "refs.bib", _entry())
    joined = _tecrl(corpus)
    assert joined["key"] == "zhan2025tecrl" and len(joined["sources"]) == 2


def test_names_compare_dois_arxiv_ids_and_real_titles_loosely():
    from rlpapers.store.join import identities

    a = identities("https://doi.org/10.1/AB", "", "Über {RL}: a Study", False, ["Müller, H."])
    b = identities("doi:10.1/ab", "", "uber RL - a study", False, ["Hans Müller"])
    assert a == b == ["doi:10.1/ab", "title:uber rl a study|muller"]
    assert identities("", "https://arxiv.org/abs/2501.01234v3", "", False, []) == [
        "arxiv:2501.01234"
    ]
    assert identities("10.48550/arXiv.2501.01234", "", "", False, []) == [
        "doi:10.48550/arxiv.2501.01234",
        "arxiv:2501.01234",
    ]
    assert identities("", "", "A Derived Title", True, ["Ada Lovelace"]) == []
    assert identities("", "", "No Author", False, []) == []


def test_matching_is_one_to_one_in_the_order_given():
    from rlpapers.store.join import match

    texts = {"t1": ["doi:x"], "t2": ["doi:x"], "t3": ["doi:y"]}
    entries = {"e1": ["doi:x"], "e2": ["doi:x"], "e3": ["doi:x"], "e4": ["doi:y"]}
    assert match(texts, entries, lambda e, t: True) == {"e1": "t1", "e2": "t2", "e4": "t3"}
    assert match(texts, entries, lambda e, t: t != "t1") == {"e1": "t2", "e4": "t3"}


def test_editing_the_entrys_doi_keeps_id_key_and_join(corpus):
    """An entry named by its DOI gets a new content id when the DOI is corrected; its key
    names the joined paper, so it stays joined (it was exit 2: the key belonged to it)."""
    _write(corpus / "refs.bib", _entry())
    before = _ids_keys(corpus)
    _write(corpus / "refs.bib", _entry("doi = {10.1234/tecrl.v2}"))
    assert _ids_keys(corpus) == before
    joined = _tecrl(corpus)
    assert joined["sources"] == ["papers.txt:5", "refs.bib:1"]


def test_a_new_entry_with_a_text_papers_old_key_is_still_an_error(corpus):
    assert _tecrl(corpus)["key"] == "zhan_tecrl"
    _write(corpus / "refs.bib", _entry())  # the text paper's key becomes an old key
    before = _ids_keys(corpus)
    other = "@misc{zhan_tecrl, title = {Another Paper}, author = {Zhan, Yi}, doi = {10.9/x}}\n"
    _write(corpus / "more.bib", other)
    err = run("--corpus", corpus, "list", code=2).stderr
    assert "key 'zhan_tecrl' already belongs to paper" in err and "more.bib:1" in err
    (corpus / "more.bib").unlink()
    assert _ids_keys(corpus) == before
