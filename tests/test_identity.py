"""Identity: ids and citation keys are given once and never move, whatever happens to the files,
the metadata or copies of an abstract."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from rlpapers import Library
from rlpapers.errors import NotFoundError, ParseError, ParseWarning
from rlpapers.keys import GENERIC_WORDS, SAFE_KEY, base_key
from rlpapers.model import Paper

from .conftest import SEEDS, run

TECRL = (
    "Deep Learning · Reinforcement Learning\n\nYi Zhan, Bo Wang\n\n"
    "We propose TECRL, a trajectory entropy-constrained method for offline agents. "
    "It bounds the entropy of whole trajectories and improves stability on control suites.\n"
)


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    stamp = time.time() + 5  # a different mtime even on coarse file systems
    os.utime(path, (stamp, stamp))


def _keys(lib: Library) -> dict[str, str]:
    return {p.id: p.key for p in lib.papers}


def _abstract(words: str, n: int = 40) -> str:
    """A realistic-length abstract: a distinctive opening and shared filler."""
    filler = " ".join(f"word{i}" for i in range(n))
    return f"We propose {words}. {filler}."


def _store_db(lib: Library) -> Path:
    return lib.settings.index_dir / "store.db"


# --- the collision story -------------------------------------------------------------------------


def test_an_unrelated_file_never_moves_an_existing_key(seeds_copy, tmp_path):
    reading = tmp_path / "reading.txt"
    reading.write_text("zhan_tecrl\nqerl\n")
    out = tmp_path / "refs.bib"
    run("--corpus", seeds_copy, "export", "--ids", reading, "-o", out)
    before = out.read_text()
    _write(seeds_copy / "zz_new.txt", f"Other topic\n\n{TECRL}")
    run("--corpus", seeds_copy, "show", "zhan_tecrl", "-f", "ids")
    listed = run("--corpus", seeds_copy, "list", "-f", "tsv").stdout
    assert "\tzhan_tecrlb\t" in listed and "\tzhan_tecrl\t" in listed
    run("--corpus", seeds_copy, "export", "--ids", reading, "-o", out, "--force")
    assert out.read_text() == before


def test_export_ids_with_unknown_entries_writes_the_rest_and_exits_1(seeds_copy, tmp_path):
    reading = tmp_path / "reading.txt"
    reading.write_text("zhan_tecrl\nqerll\nqerl\nzhan_tecrl\nnothing_like_it_at_all\n")
    result = run("--corpus", seeds_copy, "export", "--ids", reading, "-f", "ids", code=1)
    assert result.stdout.split() == [
        run("--corpus", seeds_copy, "show", "zhan_tecrl", "-f", "ids").stdout.strip(),
        run("--corpus", seeds_copy, "show", "qerl", "-f", "ids").stdout.strip(),
    ]
    assert "no paper with id or key 'qerll'; did you mean \"qerl\"?" in result.stderr
    assert "'nothing_like_it_at_all'" in result.stderr


def test_many_unknown_entries_are_named_up_to_twenty_then_counted(tmp_path):
    refs = "\n".join(f"nokey{i}" for i in range(25)) + "\nqerl\n"
    result = run("export", "--ids", "-", "-f", "ids", code=1, input=refs)
    assert len(result.stdout.split()) == 1
    assert result.stderr.count("no paper with id or key") == 20
    assert "and 5 more unknown references" in result.stderr


def test_show_names_unknown_references_and_still_shows_the_rest():
    result = run("show", "qerl", "QERL", "nope_nope", "-f", "ids", code=1)
    assert len(result.stdout.split()) == 1  # one paper, asked for twice
    assert "nope_nope" in result.stderr


# --- files come and go ---------------------------------------------------------------------------


def test_reordering_renaming_and_removing_files_keeps_ids_and_keys(seeds_copy, tmp_path):
    lib = Library([seeds_copy])
    keys = _keys(lib)
    first, second = sorted(seeds_copy.glob("*.txt"))
    first.rename(seeds_copy / "zzz_moved.txt")  # renamed, and now read last
    moved = Library([seeds_copy])
    assert _keys(moved) == keys
    (seeds_copy / "zzz_moved.txt").unlink()
    fewer = _keys(Library([seeds_copy]))
    assert fewer and all(keys[pid] == key for pid, key in fewer.items())
    # another corpus arrangement over the same data folder: a single file
    single = _keys(Library([second]))
    assert all(keys[pid] == key for pid, key in single.items())


def test_splitting_merging_and_resaving_files_keeps_ids_and_keys(seeds_copy, isolated):
    """What reorganising a folder does to its files: one split in two (the header repeated, an
    abstract edited on the way), two merged into one, a file saved again with CRLF in UTF-16
    (as Windows tools do), with the index folder cleared in between. Every paper keeps its id
    and key throughout: the edited one, and the paper named like a seed paper (zhan_tecrlb)
    once its file is read first."""
    first, second = sorted(seeds_copy.glob("*.txt"))
    _write(seeds_copy / "zz_new.txt", f"Other\n\n{TECRL}")
    keys = _keys(Library([seeds_copy]))
    assert {"zhan_tecrl", "zhan_tecrlb"} <= set(keys.values())
    header, *blocks = first.read_text(encoding="utf-8").split("\n\n")
    blocks[0] = blocks[0].replace(" the ", " the whole ", 1)  # and an abstract edited
    half = len(blocks) // 2
    _write(first, "\n\n".join([header, *blocks[:half]]))
    _write(seeds_copy / "001_second_half.txt", "\n\n".join([header, *blocks[half:]]))
    assert _keys(Library([seeds_copy])) == keys
    rest = second.read_text(encoding="utf-8").split("\n\n", 1)[1]
    _write(first, first.read_text(encoding="utf-8") + "\n\n" + rest)
    second.unlink()
    (seeds_copy / "zz_new.txt").rename(seeds_copy / "000_new.txt")  # now read first
    shutil.rmtree(isolated / "index")
    assert _keys(Library([seeds_copy])) == keys
    crlf = first.read_text(encoding="utf-8").replace("\n", "\r\n")
    first.write_bytes(crlf.encode("utf-16"))
    assert _keys(Library([seeds_copy])) == keys


def test_deleting_the_cache_keeps_keys(seeds_copy, isolated):
    _write(seeds_copy / "zz_new.txt", f"Other\n\n{TECRL}")
    keys = _keys(Library([seeds_copy]))
    shutil.rmtree(isolated / "index")
    assert _keys(Library([seeds_copy])) == keys


def _keyed_by_a_first_ledger(
    seeds_copy: Path, tmp_path: Path, monkeypatch: Any
) -> tuple[Path, Any]:
    """An index folder of the seeds whose records a first data folder's ledger keyed (the seed
    TECRL paper as zhan_tecrlb: that ledger gave zhan_tecrl to another paper first), then a
    second data folder in use; the folder and the seed paper."""
    other = tmp_path / "other"
    other.mkdir()
    _write(other / "tecrl.txt", f"Other\n\n{TECRL}")
    index = tmp_path / "index"
    monkeypatch.setenv("RLPAPERS_DATA_DIR", str(tmp_path / "first"))
    assert Library([other], index_dir=tmp_path / "other-index").papers  # its zhan_tecrl
    (seed,) = [
        p for p in Library([seeds_copy], index_dir=index).papers if p.key.startswith("zhan_tec")
    ]
    assert seed.key == "zhan_tecrlb"
    monkeypatch.setenv("RLPAPERS_DATA_DIR", str(tmp_path / "second"))
    return index, seed


def test_records_keyed_by_another_data_folders_ledger_are_keyed_again_at_once(
    seeds_copy, tmp_path, monkeypatch
):
    """One index folder, used with two data folders in turn (another RLPAPERS_DATA_DIR): the
    records the first ledger keyed were shown under the second until some file changed, and
    then re-keyed, so a key the second showed moved on an unrelated edit. The records now
    follow the ledger in use from the first command."""
    index, seed = _keyed_by_a_first_ledger(seeds_copy, tmp_path, monkeypatch)
    shown = Library([seeds_copy], index_dir=index).get(seed.id).key
    _write(seeds_copy / "zz_unrelated.txt", f"Topic\n\n{_abstract('OkapiRL for okapis')}\n")
    assert Library([seeds_copy], index_dir=index).get(seed.id).key == shown == "zhan_tecrl"


def test_index_status_is_not_fresh_for_records_keyed_by_another_ledger(
    seeds_copy, tmp_path, monkeypatch
):
    """Records another data folder's ledger keyed are refreshed before they are read (their
    keys may change): ``index --status`` with the other data folder does not call them fresh."""
    index, seed = _keyed_by_a_first_ledger(seeds_copy, tmp_path, monkeypatch)
    status = json.loads(
        run("--corpus", seeds_copy, "--index-dir", index, "index", "--status", "-f", "json").stdout
    )
    assert Library([seeds_copy], index_dir=index).get(seed.id).key == "zhan_tecrl"  # re-keyed
    assert status["state"] != "fresh", status  # is "fresh", changed_files []


def test_one_data_folder_named_through_a_symlink_is_one_ledger(seeds_copy, tmp_path, monkeypatch):
    """The records remember the ledger that keyed them; the same ledger file reached through a
    symlink to its folder is the same ledger: reading with either name refreshes nothing."""
    from rlpapers.store.refresh import Refresh

    data = tmp_path / "data"
    link = tmp_path / "link"
    link.symlink_to(data, target_is_directory=True)
    index = tmp_path / "index"
    monkeypatch.setenv("RLPAPERS_DATA_DIR", str(data))
    keys = _keys(Library([seeds_copy], index_dir=index))
    runs = []
    real = Refresh.run
    monkeypatch.setattr(Refresh, "run", lambda self: runs.append(1) or real(self))
    for folder in (link, data, link):
        monkeypatch.setenv("RLPAPERS_DATA_DIR", str(folder))
        assert _keys(Library([seeds_copy], index_dir=index)) == keys
    assert runs == []  # is [1, 1, 1]: a refresh at each switch


def test_an_edited_abstract_keeps_its_id_and_key_and_both_ids_resolve(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    text = _abstract("ZebraRL, a method for zebra crossings")
    _write(corpus / "a.txt", f"Topic\n\n{text}\n\n{_abstract('OkapiRL for okapis', 30)}\n")
    (zebra,) = [p for p in Library([corpus]).papers if p.name == "ZebraRL"]
    edited = text.replace("zebra crossings", "zebra crosings").replace("word3 ", "")
    _write(corpus / "a.txt", f"Topic\n\n{edited}\n\n{_abstract('OkapiRL for okapis', 30)}\n")
    lib = Library([corpus])
    now = lib.get("zebrarl")
    assert (now.id, now.key) == (zebra.id, zebra.key) and "crosings" in now.abstract
    from rlpapers.parse import paper_id

    assert lib.get(paper_id(edited)).id == zebra.id  # the new content id resolves too
    assert lib.get(zebra.id[:5]).id == zebra.id


def test_a_different_paper_in_the_same_place_is_new(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _write(corpus / "a.txt", "Topic\n\nWe propose BarRL, a method for bar. It works.\n")
    bar = Library([corpus]).get("barrl")
    _write(corpus / "a.txt", "Topic\n\nWe propose BazRL, a method for baz. It works.\n")
    lib = Library([corpus])
    assert lib.get("bazrl").id != bar.id
    with pytest.raises(NotFoundError):  # BarRL's key stays BarRL's: it never names BazRL
        lib.get("barrl")


# --- metadata ------------------------------------------------------------------------------------


def test_a_stale_id_in_metadata_still_applies_and_disagreements_warn(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    text = _abstract("ZebraRL, a method for zebra crossings")
    _write(corpus / "a.txt", f"Topic\n\n{text}\n")
    from rlpapers.parse import paper_id

    old_id = paper_id(text)
    assert Library([corpus]).papers
    _write(corpus / "a.txt", f"Topic\n\n{text.replace('word5', 'word55')}\n")
    _write(corpus / "a.yaml", f"{old_id}:\n  venue: NeurIPS\n")
    assert Library([corpus]).get("zebrarl").venue == "NeurIPS"
    _write(corpus / "metadata.yaml", "zebrarl:\n  venue: ICML\n")
    with pytest.warns(ParseWarning, match=r"sets venue of paper .* but .*a\.yaml:1"):
        assert Library([corpus]).papers


def test_a_metadata_key_held_by_another_paper_is_an_error(seeds_copy):
    (seeds_copy / "metadata.yaml").write_text(
        "zhan_tecrl:\n  year: 2024\nqerl:\n  key: zhan_tecrl\n"
    )
    result = run("--corpus", seeds_copy, "list", code=2)
    assert "metadata.yaml:3" in result.stderr and "zhan_tecrl" in result.stderr
    assert "already belongs to paper" in result.stderr and result.stderr.count("\n") == 1


def test_a_metadata_key_that_is_another_papers_id_is_an_error(seeds_copy):
    """Observed: ``qerl: {key: ID}`` with ID another paper's id was accepted; ``show ID``
    (the id a user had printed) then found the other paper, since an id wins over a key."""
    other = Library([seeds_copy]).get("zhan_tecrl").id
    (seeds_copy / "metadata.yaml").write_text(f"qerl:\n  key: {other}\n")
    result = run("--corpus", seeds_copy, "list", code=2)
    assert "metadata.yaml:1" in result.stderr and f"is an id of paper {other}" in result.stderr
    (seeds_copy / "metadata.yaml").write_text(f"qerl:\n  key: {other.upper()}\n")
    run("--corpus", seeds_copy, "list", code=2)  # ids are found in any case


def test_a_metadata_key_wins_for_its_paper_and_the_old_key_still_resolves(seeds_copy):
    lib = Library([seeds_copy])
    qerl = lib.get("qerl")
    (seeds_copy / "metadata.yaml").write_text("qerl:\n  key: Qerl2025\n")
    lib = Library([seeds_copy])
    assert lib.get("qerl2025").key == "Qerl2025" and lib.get("qerl").id == qerl.id


@pytest.mark.parametrize("key", ["a b", "x}\n@misc{evil,", "k{ey", "per%cent", "", "-lead"])
def test_unsafe_metadata_keys_are_an_error_naming_the_line(seeds_copy, key):
    (seeds_copy / "metadata.yaml").write_text(
        f"pcl:\n  year: 2024\nqerl:\n  key: {json.dumps(key)}\n"
    )
    with pytest.raises(ParseError, match=r"metadata\.yaml:4: key .* is not a safe citation key"):
        assert Library([seeds_copy]).papers


def test_pinned_keys_travel_to_a_fresh_data_folder(seeds_copy, monkeypatch, tmp_path):
    _write(seeds_copy / "zz_new.txt", f"Other\n\n{TECRL}")
    keys = {p.abstract: p.key for p in Library([seeds_copy]).papers}
    run("--corpus", seeds_copy, "keys", "--pin")
    pinned = (seeds_copy / "keys.yaml").read_text()
    assert "zhan_tecrlb" in pinned
    # the other machine: a fresh data folder, the files read in another order
    monkeypatch.setenv("RLPAPERS_DATA_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("RLPAPERS_INDEX_DIR", str(tmp_path / "elsewhere-cache"))
    (seeds_copy / "zz_new.txt").rename(seeds_copy / "aa_new.txt")
    assert {p.abstract: p.key for p in Library([seeds_copy]).papers} == keys
    # pinning again keeps the file as it was, and the bundled seeds are never written
    run("--corpus", seeds_copy, "keys", "--pin")
    assert (seeds_copy / "keys.yaml").read_text() == pinned
    run("keys", "--pin")
    assert not (SEEDS / "keys.yaml").exists()


# --- keys ----------------------------------------------------------------------------------------


def test_no_bundled_key_is_a_generic_word():
    papers = Library([SEEDS]).papers
    for paper in papers:
        assert SAFE_KEY.fullmatch(paper.key)
        assert not {paper.key, *paper.key.split("_")} & GENERIC_WORDS, paper.key


def test_particles_stay_in_surnames():
    van = Paper(id="x", abstract="a", name="SegNet", authors=("Luc van Gool",))
    dela = Paper(id="y", abstract="a", name="Foo", authors=("Juan de la Cruz",))
    assert base_key(van) == "vangool_segnet" and base_key(dela) == "delacruz_foo"
    from rlpapers.exporters.csljson import item

    assert item(van)["author"] == [{"family": "van Gool", "given": "Luc"}]


def test_titles_never_give_generic_keys():
    from rlpapers.keys import title_word

    assert (
        title_word("Objective for policy gradient methods that enforces refinement") == "refinement"
    )
    assert title_word("Efficient dataset distillation algorithm") == "distillation"
    assert title_word("Contrastive policy learning") == "contrastivepolicy"


def test_one_lookup_rule_for_the_library_and_load_corpus():
    from rlpapers import load_corpus

    lib, corpus = Library(), load_corpus()
    for ref in ("QERL", "qerl", lib.get("qerl").id.upper(), lib.get("qerl").id[:5]):
        assert lib.get(ref) == corpus.get(ref)
    with pytest.raises(NotFoundError, match='did you mean "qerl"'):
        corpus.get("qerll")


def test_a_copied_abstract_follows_an_edit_to_any_file_holding_a_copy(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    shared = _abstract("YakRL, a method for yaks")
    _write(corpus / "a.txt", f"Topic\n\n{shared}\n\n{_abstract('OkapiRL for okapis', 30)}\n")
    _write(corpus / "b.txt", f"Topic\n\nDeep Learning · RL\n\nAda Lovelace\n\n{shared}\n")
    _write(corpus / "c.txt", f"Topic\n\n{_abstract('EmuRL for emus', 20)}\n")
    lib = Library([corpus])
    yak = lib.get("yakrl")
    assert yak.authors == ("Ada Lovelace",) and len(yak.sources) == 2

    def changed() -> int:
        with sqlite3.connect(_store_db(lib)) as con:
            return con.execute("SELECT changed FROM records WHERE id = ?", (yak.id,)).fetchone()[0]

    before = changed()
    _write(corpus / "c.txt", f"Topic\n\n{_abstract('EmuRL for emus and rheas', 20)}\n")
    assert Library([corpus]).get("yakrl") == yak and changed() == before  # not rewritten
    _write(corpus / "b.txt", f"Topic\n\nDeep Learning · RL\n\nAlan Turing\n\n{shared}\n")
    assert Library([corpus]).get("yakrl").authors == ("Alan Turing",)  # a.txt is unchanged
    _write(corpus / "a.txt", f"Topic\n\n{_abstract('OkapiRL for okapis', 30)}\n")
    assert [s.split(":")[0] for s in Library([corpus]).get("yakrl").sources] == ["b.txt"]


def test_records_after_each_refresh_equal_a_store_built_from_scratch(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    shared = _abstract("YakRL, a method for yaks")
    okapi, emu, gnu = (_abstract(f"{n}RL for {n.lower()}s", 25) for n in ("Okapi", "Emu", "Gnu"))
    a_text = f"Topic A\n\n{shared}\n\n{okapi}\n"
    b_text = f"Topic B\n\nDeep Learning · RL\n\nAda Lovelace\n\n{shared}\n\n{emu}\n"
    _write(corpus / "a.txt", a_text)
    _write(corpus / "b.txt", b_text)
    edits = [
        ("a.txt", a_text + f"\n{gnu}\n"),  # a paper appended
        ("a.txt", f"Topic A\n\n{gnu}\n\n{shared}\n\n{okapi}\n"),  # moved to the top
        ("b.txt", b_text.replace("Ada Lovelace", "Alan Turing")),  # a copy's authors
        ("a.yaml", "okapirl:\n  title: Okapis, a study\n"),  # metadata
        ("b.txt", f"Topic B\n\n{emu}\n"),  # a copy removed
    ]
    live = tmp_path / "live"
    assert Library([corpus], index_dir=live).papers
    for n, (name, text) in enumerate(edits):
        _write(corpus / name, text)
        refreshed = Library([corpus], index_dir=live).papers
        scratch = Library([corpus], index_dir=tmp_path / f"scratch{n}").papers
        assert [p.to_dict() for p in refreshed] == [p.to_dict() for p in scratch], name


def test_reordered_files_list_a_copied_abstract_in_their_new_order(tmp_path):
    shared = _abstract("YakRL, a method for yaks")
    files = []
    for name in ("a", "b", "c"):
        own = _abstract(f"{name.upper()}onlyRL for {name}s", 20)
        _write(tmp_path / f"{name}.txt", f"Topic\n\n{shared}\n\n{own}\n")
        files.append(tmp_path / f"{name}.txt")
    live = tmp_path / "live"
    assert Library(files, index_dir=live).get("yakrl").sources[1].startswith("b.txt")
    reordered = [files[0], files[2], files[1]]
    refreshed = Library(reordered, index_dir=live).get("yakrl")
    scratch = Library(reordered, index_dir=tmp_path / "scratch").get("yakrl")
    assert refreshed.sources == scratch.sources and refreshed.sources[1].startswith("c.txt")


def test_ledger_lookups_agree_whether_they_probe_or_scan(tmp_path):
    from rlpapers.store.db import transaction
    from rlpapers.store.ledger import Ledger

    ledger = Ledger(tmp_path)
    with transaction(ledger.con):
        for n in range(60):
            ledger.add_paper(f"p{n:03d}", [f"c{n:03d}"])
            ledger.give_key(f"p{n:03d}", f"key{n}")
    few = ["c001", "c007", "nope"]  # probed one by one
    many = [f"c{n:03d}" for n in range(60)] + ["nope"]  # found in one pass
    assert ledger.ids_of(few) == {"c001": "p001", "c007": "p007"}
    assert ledger.ids_of(many) == {f"c{n:03d}": f"p{n:03d}" for n in range(60)}
    assert ledger.keys_of(["p003", "zz"]) == {"p003": "key3"}
    assert ledger.keys_of([f"p{n:03d}" for n in range(60)]) == {
        f"p{n:03d}": f"key{n}" for n in range(60)
    }


def test_an_abstract_and_its_edited_version_kept_side_by_side_are_two_stable_papers(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    first = _abstract("YakRL, a method for yaks")
    edited = first.replace("word3 ", "")  # a small edit: the same paper
    _write(corpus / "a.txt", f"Topic\n\n{first}\n")
    (yak,) = Library([corpus]).papers
    _write(corpus / "a.txt", f"Topic\n\n{edited}\n")
    assert [(p.id, p.key) for p in Library([corpus]).papers] == [(yak.id, yak.key)]
    _write(corpus / "a.txt", f"Topic\n\n{first}\n\n{edited}\n")  # both versions, kept
    both = [(p.id, p.key) for p in Library([corpus]).papers]
    # the paper keeps the text it last had (the edited one), wherever the other one stands
    assert both[1] == (yak.id, yak.key) and len(set(both)) == 2
    _write(corpus / "a.txt", f"Topic\n\n{first}\n\n{edited}\n\n")  # touched: a refresh
    assert [(p.id, p.key) for p in Library([corpus]).papers] == both
    scratch = Library([corpus], index_dir=tmp_path / "scratch").papers  # the same ledger
    assert [(p.id, p.key) for p in scratch] == both
