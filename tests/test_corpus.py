"""The corpus: bundled seeds, deduplication, keys, metadata overrides, filters, configuration."""

from __future__ import annotations

import json
import re

import pytest

from rlpapers import Library, load_corpus
from rlpapers.config import bundled_seeds, resolve
from rlpapers.errors import CorpusError, NotFoundError, ParseError, ParseWarning
from rlpapers.filters import Filters
from rlpapers.keys import base_key, keys_from_bases
from rlpapers.lookup import MemoryLookup
from rlpapers.model import Paper
from rlpapers.store.files import corpus_files

from .conftest import SEEDS, run


@pytest.fixture(scope="module")
def seeds():
    return load_corpus([SEEDS]).papers


def test_bundled_corpus_has_40_papers_with_titles_and_unique_ids_and_keys(seeds):
    assert len(seeds) == 40
    assert all(p.title and len(p.title) <= 200 for p in seeds)
    assert len({p.id for p in seeds}) == 40
    assert len({p.key for p in seeds}) == 40
    assert all(re.fullmatch(r"[a-z0-9_]+", p.key) for p in seeds)


def test_twenty_seed_papers_have_authors_and_categories(seeds):
    with_authors = [p for p in seeds if p.authors]
    assert len(with_authors) == 20
    assert all(p.categories for p in with_authors)
    assert all("等" not in name for p in seeds for name in p.authors)
    assert {p.topic for p in seeds} == {"强化学习", "论文检索"}


def test_seed_names_and_keys(seeds):
    by_name = {p.name: p for p in seeds if p.name}
    assert {"QeRL", "AlphaSAGE", "PCL", "TreeBench", "RLAnything", "PAMD"} <= set(by_name)
    assert by_name["QeRL"].key == "qerl"
    assert by_name["RLAnything"].key == "wang_rlanything"
    assert by_name["PAMD"].title.startswith("PAMD: Pairwise Adaptive Mahalanobis Distance")


def test_truncated_author_list_is_flagged(seeds):
    truncated = [p for p in seeds if p.authors_truncated]
    assert truncated and all(p.authors for p in truncated)


def test_keys_are_transliterated():
    paper = Paper(id="x", abstract="a", name="PlanRL", authors=("Michael Aichmüller",))
    assert base_key(paper) == "aichmuller_planrl"
    assert base_key(Paper(id="y", abstract="a", name="X1", authors=("王小明",))) == "wang_x1"


def find_paper(papers, ref):
    return MemoryLookup(papers).get(ref)


def test_colliding_keys_without_a_ledger_get_letter_suffixes_after_the_first():
    keys = keys_from_bases({"b": "lovelace_same", "a": "lovelace_same", "c": "lovelace_same"})
    assert keys == {"b": "lovelace_same", "a": "lovelace_sameb", "c": "lovelace_samec"}


def test_suffixed_keys_never_take_another_papers_key():
    keys = keys_from_bases({"x": "chen_post", "y": "chen_post", "z": "chen_postb"})
    assert keys == {"x": "chen_post", "y": "chen_postc", "z": "chen_postb"}


def test_the_same_abstract_twice_is_one_record_with_both_sources(tmp_path):
    text = "Topic\n\nAda Lovelace, Alan Turing\n\nWe propose FooRL, a method.   It is good.\n"
    (tmp_path / "a.txt").write_text(text)
    (tmp_path / "b.txt").write_text("Other\n\nWe propose FooRL,  a method. It is good.\n")
    (paper,) = load_corpus([tmp_path]).papers
    assert paper.sources == ("a.txt:5", "b.txt:3")
    assert paper.authors == ("Ada Lovelace", "Alan Turing")


def test_missing_corpus_path_is_an_error(tmp_path):
    with pytest.raises(CorpusError, match="does not exist"):
        corpus_files([tmp_path / "missing"])


def test_metadata_sidecar_overrides_fields(seeds_copy):
    sidecar = seeds_copy / "000_eda7530d3ab384ed.yaml"
    sidecar.write_text(
        "qerl:\n  year: 2025\n  venue: ICLR\n  tags: [quantization]\n  doi: 10.1/x\n"
    )
    paper = find_paper(load_corpus([seeds_copy]).papers, "qerl")
    assert (paper.year, paper.venue, paper.tags, paper.doi) == (
        2025,
        "ICLR",
        ("quantization",),
        "10.1/x",
    )


def test_metadata_strings_are_made_valid_one_line_text(seeds_copy):
    """Hand-written YAML can hold a lone surrogate (which UTF-8 cannot encode: every command
    was exit 70), an escape sequence a terminal would obey, a NUL or a line break."""
    (seeds_copy / "metadata.yaml").write_text(
        'qerl:\n  title: "bad \\uDC80 \\e[31mred\\e[0m"\n  note: "a\\0b\\nc"\n  tags: ["x\\ty"]\n'
    )
    paper = find_paper(Library([seeds_copy]).papers, "qerl")
    assert (paper.title, paper.note, paper.tags) == ("bad \ufffd  [31mred [0m", "a b c", ("x y",))
    shown = run("--corpus", seeds_copy, "show", "qerl", "-f", "json").stdout
    assert "\x1b" not in shown and json.loads(shown)[0]["title"] == paper.title


def test_metadata_by_id_can_set_title_and_key(seeds_copy, seeds):
    target = find_paper(seeds, "qerl")
    (seeds_copy / "metadata.yaml").write_text(
        f"{target.id}:\n  title: QeRL for real\n  key: qerl2025\n"
    )
    paper = find_paper(load_corpus([seeds_copy]).papers, "qerl2025")
    assert paper.title == "QeRL for real"


def test_invalid_metadata_yaml_names_file_and_line(seeds_copy):
    (seeds_copy / "metadata.yaml").write_text("qerl:\n  year: 2025\n  venue: [unclosed\n")
    with pytest.raises(ParseError, match=r"metadata\.yaml:\d+: invalid YAML"):
        load_corpus([seeds_copy])


def test_unknown_metadata_field_is_an_error_with_line(seeds_copy):
    (seeds_copy / "metadata.yaml").write_text("qerl:\n  year: 2025\npcl:\n  colour: red\n")
    with pytest.raises(ParseError, match=r"metadata\.yaml:4: unknown field 'colour'"):
        load_corpus([seeds_copy])


def test_a_bad_field_is_named_by_its_own_line(seeds_copy):
    """Observed: ``year: 20245`` three lines into an entry was reported at the entry's line."""
    (seeds_copy / "metadata.yaml").write_text(
        "qerl:\n  venue: ICLR\n  note: fine\n  year: 20245\n", encoding="utf-8"
    )
    with pytest.raises(ParseError, match=r"metadata\.yaml:4: year 20245 is out of range"):
        load_corpus([seeds_copy])


def test_unknown_metadata_target_is_a_warning(seeds_copy):
    (seeds_copy / "metadata.yaml").write_text("nosuchpaper:\n  year: 2025\n")
    with pytest.warns(
        ParseWarning, match=r"metadata\.yaml:1: no paper with id or key 'nosuchpaper'"
    ):
        load_corpus([seeds_copy])


def test_find_paper_by_key_id_and_prefix(seeds):
    paper = find_paper(seeds, "qerl")
    assert find_paper(seeds, paper.id) == paper
    assert find_paper(seeds, paper.id[:6]) == paper
    with pytest.raises(NotFoundError):
        find_paper(seeds, "nope")


def test_filters_fold_case_and_accents(seeds):
    assert [p.key for p in Filters(author=("aichmuller",)).apply(seeds)] == [
        "aichmuller_selfimproving"
    ]
    planning = Filters(category=("planning",), topic=("论文",)).apply(seeds)
    assert planning and all("Planning" in p.categories for p in planning)
    assert Filters(author=("Bengio",), category=("nothing",)).apply(seeds) == []


def test_corpus_resolution_order(monkeypatch, tmp_path, isolated):
    assert resolve().corpus == (bundled_seeds(),)
    config = tmp_path / "cfg.yaml"
    config.write_text("corpus: papers\nindex_dir: /tmp/idx\n")
    monkeypatch.setenv("RLPAPERS_CONFIG", str(config))
    monkeypatch.delenv("RLPAPERS_INDEX_DIR")
    assert resolve().corpus == (tmp_path / "papers",)
    monkeypatch.setenv("RLPAPERS_CORPUS", f"/a{__import__('os').pathsep}/b")
    assert [str(p) for p in resolve().corpus] == ["/a", "/b"]
    assert [str(p) for p in resolve([tmp_path]).corpus] == [str(tmp_path)]


def test_bad_config_file_is_a_clear_error(monkeypatch, tmp_path):
    config = tmp_path / "cfg.yaml"
    config.write_text("colour: blue\n")
    monkeypatch.setenv("RLPAPERS_CONFIG", str(config))
    with pytest.raises(ParseError, match="unknown setting 'colour'"):
        resolve()


def test_search_rerank_setting(monkeypatch, tmp_path):
    config = tmp_path / "cfg.yaml"
    monkeypatch.setenv("RLPAPERS_CONFIG", str(config))
    config.write_text("search:\n  rerank: 0\n")
    assert resolve().search_rerank == 0
    for bad in ("-1", "yes", "2.5", "100000"):
        config.write_text(f"search:\n  rerank: {bad}\n")
        with pytest.raises(ParseError, match="search.rerank must be"):
            resolve()


def test_library_uses_bundled_seeds_by_default():
    assert len(Library().papers) == 40


def test_bundled_seeds_are_the_shared_seed_files_unchanged():
    shared = SEEDS.parents[1] / "shared" / "seeds"
    if not shared.is_dir():
        pytest.skip("../shared/seeds is not beside this checkout")
    for path in shared.glob("*.txt"):
        assert (SEEDS / path.name).read_bytes() == path.read_bytes()


def test_with_changes_copies_and_checks_field_names():
    paper = Paper(id="x", abstract="a", key="k", source="f.txt", line=3)
    changed = paper.with_changes(key="new", year=2025)
    assert (changed.key, changed.year, changed.line) == ("new", 2025, 3)
    assert (
        paper.key == "k"
        and changed != paper
        and changed == Paper(id="x", abstract="a", key="new", year=2025)
    )
    with pytest.raises(TypeError, match="colour"):
        paper.with_changes(colour="red")


def test_a_named_config_file_that_is_missing_is_exit_2(seeds_copy, monkeypatch, tmp_path):
    """RLPAPERS_CONFIG naming no file silently ran on the bundled seeds, exit 0."""
    monkeypatch.setenv("RLPAPERS_CONFIG", str(tmp_path / "nonexistent.yaml"))
    result = run("list", "-f", "ids", code=2)
    assert "nonexistent.yaml" in result.stderr and "RLPAPERS_CONFIG" in result.stderr
    assert result.stdout == ""


def test_the_platform_config_file_may_be_absent(monkeypatch, tmp_path):
    monkeypatch.delenv("RLPAPERS_CONFIG")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "nothing-here"))
    assert run("list", "-f", "ids").stdout


def test_config_says_where_the_config_file_came_from(monkeypatch, tmp_path):
    shown = run("config", "-f", "tsv").stdout
    assert "config file\t" in shown and "\tRLPAPERS_CONFIG\n" in shown
    monkeypatch.delenv("RLPAPERS_CONFIG")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert "\tplatform folder\n" in run("config", "-f", "tsv").stdout


def _seed_paper(n: int, author: str) -> str:
    return (
        f"Topic\n\n{author}\n\nWe propose Yak{n}RL, a method number {n} for herding yaks with "
        f"reinforcement learning over {n} seasons and many pastures.\n"
    )


def test_a_folder_is_read_recursively_as_ripgrep_would(tmp_path):
    """Files in sub-folders were not found ("no *.txt files in this folder", exit 1)."""
    root = tmp_path / "corpus"
    for folder, n in (("sub1", 1), ("sub2", 2), (".hidden", 3), ("sub1/deeper", 4)):
        (root / folder).mkdir(parents=True)
        (root / folder / "a.txt").write_text(_seed_paper(n, "Ann Lee"), encoding="utf-8")
    (root / "top.txt").write_text(_seed_paper(5, "Bo Chen"), encoding="utf-8")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "b.txt").write_text(_seed_paper(6, "Cy Dee"), encoding="utf-8")
    (root / "linked").symlink_to(tmp_path / "outside", target_is_directory=True)
    (root / "sub1" / "metadata.yaml").write_text("lee_yak1rl: {venue: ICML}\n", encoding="utf-8")
    with Library([root]) as lib:
        papers = lib.papers
    assert [p.source for p in papers] == [
        "sub1/a.txt",
        "sub1/deeper/a.txt",
        "sub2/a.txt",
        "top.txt",
    ]
    assert [p.venue for p in papers] == ["ICML", "", "", ""]  # its own folder's metadata only
    tsv = run("--corpus", root, "list", "-f", "tsv").stdout
    assert "sub2/a.txt" in tsv and "Yak3RL" not in tsv and "Yak6RL" not in tsv


def test_a_file_moved_into_a_sub_folder_shows_its_new_name(tmp_path):
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "a.txt").write_text(_seed_paper(1, "Ann Lee"), encoding="utf-8")
    with Library([root]) as lib:
        (before,) = lib.papers
    (root / "old").mkdir()
    (root / "a.txt").rename(root / "old" / "a.txt")
    with Library([root]) as lib:
        (after,) = lib.papers
    assert (before.source, after.source) == ("a.txt", "old/a.txt")
    assert (before.id, before.key) == (after.id, after.key)


def test_config_shows_the_ledger_and_the_search_settings(isolated):
    """config showed neither search.mode nor where the ledger is."""
    (isolated / "config.yaml").write_text("search:\n  mode: lexical\n", encoding="utf-8")
    rows = {
        line.split("\t")[0]: line.split("\t")[1:]
        for line in run("config", "-f", "tsv").stdout.splitlines()
    }
    assert rows["ledger"] == [str(isolated / "data" / "ledger.db"), "RLPAPERS_DATA_DIR"]
    assert rows["search.mode"] == ["lexical", str(isolated / "config.yaml")]
    assert rows["search.rerank"] == ["10", "default"]  # the window in use, from the default


def test_a_bad_search_setting_or_unknown_setting_names_its_line(monkeypatch, tmp_path):
    """Observed: ``error: cfg.yaml: search.mode must be one of lexical, hybrid, semantic (not
    'fuzzy')`` and ``cfg.yaml: unknown setting 'colour'`` named no line, while a bad
    ``keys.format``, ``corpus`` or ``index_dir`` names the line of its setting."""
    config = tmp_path / "cfg.yaml"
    monkeypatch.setenv("RLPAPERS_CONFIG", str(config))
    for text in ("# mine\nsearch:\n  mode: fuzzy\n", "# mine\nsearch:\n  rerank: -1\n"):
        config.write_text(text)
        with pytest.raises(ParseError, match=f"^{re.escape(str(config))}:2: search"):
            resolve()
    config.write_text("search:\n  mode: lexical\ncolour: blue\n")
    with pytest.raises(ParseError, match=f"^{re.escape(str(config))}:3: unknown setting"):
        resolve()
