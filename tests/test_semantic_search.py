"""Hybrid and semantic search end to end: stored vectors, modes, filters, resumed embedding.

Needs the ``semantic`` extra (the test extra installs it); skipped cleanly without it, except the
tests of what a user without the extra sees.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from rlpapers import Library
from rlpapers.filters import Filters

from .conftest import ROOT, run, smash_page

VEHICLES = """Vehicles

We study automobile crash safety: how seat belts and airbags protect drivers in highway collisions.

We propose GiraffeRL, a reinforcement learning method for giraffe herds grazing in savannas.

Protein folding is predicted from amino-acid sequences with attention networks.
"""
FINANCE = """Finance

Monetary policy shapes inflation expectations and bond yields in emerging economies.

We propose TrafficRL, which learns traffic light timing so that automobiles wait less at junctions.
"""


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    stamp = time.time() + 5
    os.utime(path, (stamp, stamp))


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    _write(folder / "a.txt", VEHICLES)
    _write(folder / "b.txt", FINANCE)
    return folder


@pytest.fixture
def semantic():
    for module in ("numpy", "onnxruntime", "tokenizers"):
        pytest.importorskip(module)


@pytest.fixture
def counted(monkeypatch, semantic):
    """Counts the texts the model embeds."""
    from rlpapers.semantic.encoder import Encoder

    seen: list[str] = []
    original = Encoder.embed

    def embed(self, texts, *args, **kwargs):
        seen.extend(texts)
        return original(self, texts, *args, **kwargs)

    monkeypatch.setattr(Encoder, "embed", embed)
    return seen


def lib_of(corpus: Path, tmp_path: Path) -> Library:
    return Library([corpus], tmp_path / "index")


# --- without the extra -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["search", "--mode", "hybrid", "cars"],
        ["search", "--mode", "semantic", "cars"],
        ["embed"],
        ["similar", "FIRST", "--mode", "semantic"],
        ["similar", "FIRST", "--mode", "hybrid"],
        ["similar", "--text", "cars on roads", "--mode", "semantic"],
    ],
    ids=" ".join,
)
@pytest.mark.parametrize(
    "missing", [("onnxruntime",), ("numpy", "onnxruntime", "tokenizers")], ids=["onnx", "all"]
)
def test_without_the_extra_one_line_says_how_to_install(monkeypatch, corpus, args, missing):
    """Every semantic path: similar --mode semantic was exit 70 (ModuleNotFoundError: numpy)."""
    first = run("--corpus", corpus, "list", "-f", "ids").stdout.split()[0]
    args = [first if a == "FIRST" else a for a in args]
    for name in [m for m in sys.modules if m.startswith("rlpapers.semantic.")]:
        monkeypatch.delitem(sys.modules, name)  # imported again, without the extra
    for name in missing:
        monkeypatch.setitem(sys.modules, name, None)
    result = run("--corpus", corpus, *args, code=2)
    assert result.stderr.strip().count("\n") == 0
    assert "pip install 'rlpapers[semantic]'" in result.stderr


@pytest.mark.parametrize("damage", ["missing", "cut", "tokenizer"])
@pytest.mark.parametrize(
    "args",
    [["search", "--mode", "hybrid", "cars"], ["embed"], ["similar", "FIRST", "--mode", "semantic"]],
    ids=" ".join,
)
def test_a_missing_or_damaged_model_is_one_line_exit_2(
    monkeypatch, corpus, tmp_path, semantic, damage, args
):
    """The shipped model's files gone or damaged (a broken install, a disk): it was exit 70,
    "internal error (FileNotFoundError …)" or onnxruntime's own error."""
    import shutil

    import rlpapers.semantic
    from rlpapers.semantic import MODEL_DIR, encoder, vectors

    folder = tmp_path / "model"
    shutil.copytree(MODEL_DIR, folder)
    if damage == "missing":
        (folder / "model.onnx").unlink()
    elif damage == "cut":
        (folder / "model.onnx").write_bytes((MODEL_DIR / "model.onnx").read_bytes()[:100_000])
    else:
        (folder / "tokenizer.json").write_text("{", encoding="utf-8")
    monkeypatch.setattr(rlpapers.semantic, "MODEL_DIR", folder)
    monkeypatch.setattr(vectors, "MODEL_DIR", folder)
    monkeypatch.setattr(encoder, "MODEL_DIR", folder)
    encoder.Encoder.shipped.__func__.cache_clear()
    if "FIRST" in args:
        first = run("--corpus", corpus, "list", "-f", "ids").stdout.split()[0]
        args = [first if a == "FIRST" else a for a in args]
    result = run("--corpus", corpus, *args, code=2)
    encoder.Encoder.shipped.__func__.cache_clear()
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: the semantic model in "), lines
    assert str(folder) in lines[0] and "reinstall" in lines[0], lines
    assert "internal error" not in lines[0]


def test_without_the_extra_lexical_search_works_as_before(monkeypatch, corpus):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    assert "automobile" in run("--corpus", corpus, "search", "automobile").stdout


# --- embeddings in the store -------------------------------------------------------------------


def test_vectors_are_stored_once_and_reused(corpus, tmp_path, counted):
    assert Library([corpus], tmp_path / "index").embed() == {"embedded": 5, "stored": 5}
    assert len(counted) == 5
    lib = lib_of(corpus, tmp_path)
    assert lib.embed()["embedded"] == 0
    lib.search("cars", mode="hybrid")
    lib_of(corpus, tmp_path).search("cars", mode="semantic")
    assert len(counted) == 5 + 2  # the two queries only


def test_an_edited_abstract_is_embedded_again_and_only_it(corpus, tmp_path, counted):
    lib_of(corpus, tmp_path).embed()
    _write(corpus / "b.txt", FINANCE.replace("bond yields", "currency pegs"))
    assert lib_of(corpus, tmp_path).embed() == {"embedded": 1, "stored": 5}
    assert "currency pegs" in counted[-1]


def test_a_new_model_hash_embeds_everything_again(corpus, tmp_path, counted, monkeypatch):
    lib_of(corpus, tmp_path).embed()
    from rlpapers.semantic import vectors

    monkeypatch.setattr(vectors, "model_tag", lambda: "all-minilm-l6-v2-int8:another-hash")
    lib = lib_of(corpus, tmp_path)
    assert lib.embed() == {"embedded": 5, "stored": 5}
    (count,) = lib.store.con.execute("SELECT count(*) FROM embeddings").fetchone()
    assert count == 5  # the old model's vectors were dropped


def test_an_interrupted_embedding_keeps_its_batches_and_resumes(corpus, tmp_path, counted):
    from rlpapers.semantic.vectors import Vectors

    lib = lib_of(corpus, tmp_path)
    vectors = Vectors(lib.store)

    def stop_after_first_batch(done: int, total: int) -> None:
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        vectors.embed([lib.get(p.id) for p in lib.papers], stop_after_first_batch, batch=2)
    assert lib.store.embeddings.count(vectors.model) == 2
    assert lib_of(corpus, tmp_path).embed() == {"embedded": 3, "stored": 5}


def test_kill_9_in_the_middle_of_a_batch_loses_only_that_batch(corpus, tmp_path, semantic):
    script = textwrap.dedent(
        f"""
        import os, signal
        from rlpapers import Library
        from rlpapers.semantic import vectors
        from rlpapers.semantic.encoder import Encoder
        calls = []
        original = Encoder.embed
        def embed(self, texts, *a, **k):
            calls.append(1)
            if len(calls) == 2:  # the second batch: killed before it is stored
                os.kill(os.getpid(), signal.SIGKILL)
            return original(self, texts, *a, **k)
        Encoder.embed = embed
        vectors.COMMIT_EVERY = 2
        Library([{str(corpus)!r}], {str(tmp_path / "index")!r}).embed()
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    lib = lib_of(corpus, tmp_path)
    from rlpapers.semantic.vectors import Vectors

    assert lib.store.embeddings.count(Vectors(lib.store).model) == 2
    assert lib.embed() == {"embedded": 3, "stored": 5}


def test_a_search_refuses_to_start_a_long_embedding(corpus, tmp_path, semantic, monkeypatch):
    from rlpapers.semantic import modes

    monkeypatch.setattr(modes, "EMBED_RATE", 0.05)  # 5 papers: 100 s
    result = run("--corpus", corpus, "search", "--mode", "hybrid", "cars", code=2)
    assert "run `rlpapers embed`: about 100 seconds for 5 papers" in result.stderr
    run("--corpus", corpus, "embed")
    assert "automobile" in run("--corpus", corpus, "search", "--mode", "hybrid", "cars").stdout


# --- modes -------------------------------------------------------------------------------------


def test_hybrid_finds_a_paper_that_shares_no_keyword_with_the_query(corpus, tmp_path, semantic):
    run("--corpus", corpus, "search", "cars", code=1)  # no paper says "cars" (or "car")
    hits = lib_of(corpus, tmp_path).search("cars", mode="hybrid")
    firsts = sorted(h.paper.abstract[:20] for h in hits[:2])
    assert firsts == ["We propose TrafficRL", "We study automobile "]  # the two about cars
    crash = hits[[h.paper.abstract[:8] for h in hits].index("We study")]
    assert crash.highlights == ()  # nothing matched: the opening sentence instead
    assert crash.snippet == crash.paper.abstract.split("\n")[0].split(". ")[0]


@pytest.mark.parametrize("args", [["search", "automobiles", "--mode", "hybrid"], ["embed"]])
def test_a_garbled_record_heals_in_the_semantic_paths(corpus, semantic, args):
    """A store found damaged in the middle of a hybrid search, or while embedding, is rebuilt
    and the command answers (the vectors' table held the connection the heal closed)."""
    import sqlite3

    run("--corpus", corpus, "search", "automobiles", "--mode", "hybrid")
    store = next((Path(os.environ["RLPAPERS_INDEX_DIR"])).glob("*/store.db"))
    con = sqlite3.connect(store)
    con.execute("UPDATE records SET data = '[1, 2' WHERE rowid = 2")
    con.execute("DELETE FROM embeddings_complete")  # the vectors are looked over again
    con.commit()
    con.close()
    healed = run("--corpus", corpus, *args)
    assert "record store" in healed.stderr and "rebuilding" in healed.stderr
    run("--corpus", corpus, *args)


def test_a_broken_page_of_vectors_heals(corpus, semantic):
    """Damage inside the vectors' table: the store is rebuilt (the vectors made again) and the
    search answers; it was exit 70 on every run."""
    run("--corpus", corpus, "search", "automobiles", "--mode", "hybrid")
    store = next((Path(os.environ["RLPAPERS_INDEX_DIR"])).glob("*/store.db"))
    smash_page(store, "embeddings")
    healed = run("--corpus", corpus, "search", "automobiles", "--mode", "hybrid", "-f", "ids")
    assert "record store" in healed.stderr and healed.stdout
    assert run("--corpus", corpus, "search", "automobiles", "--mode", "hybrid").stderr == ""


def test_modes_and_filters_combine(corpus, tmp_path, semantic):
    lib = lib_of(corpus, tmp_path)
    for mode in ("lexical", "hybrid", "semantic"):
        hits = lib.search("automobiles", mode=mode, filters=Filters(topic=("Finance",)))
        assert hits, mode
        assert {h.paper.topic for h in hits} == {"Finance"}, mode
    semantic_hits = lib.search("automobiles", mode="semantic", limit=None)
    assert {h.paper.topic for h in semantic_hits} == {"Vehicles", "Finance"}


def test_hybrid_keeps_field_queries_and_operators(corpus, tmp_path, semantic):
    lib = lib_of(corpus, tmp_path)
    hits = lib.search("topic:finance", mode="hybrid", limit=None)
    assert {h.paper.topic for h in hits} == {"Finance"} and len(hits) == 2
    for query in ("automobiles AND wait", "title:trafficrl OR seat", "automobiles NOT traffic"):
        lexical = {h.paper.id for h in lib.search(query, limit=None)}
        assert {h.paper.id for h in lib.search(query, mode="hybrid", limit=None)} == lexical
    ranked = [h.paper.abstract[:20] for h in lib.search("topic:finance cars", mode="hybrid")]
    assert ranked[0].startswith("We propose TrafficRL")  # the dense side re-ranks the matches


def test_semantic_mode_refuses_operators_and_names_the_modes_that_take_them(corpus, semantic):
    for query in ("title:entropy", "cars AND trucks", '"seat belts"', "car*"):
        result = run("--corpus", corpus, "search", "--mode", "semantic", query, code=2)
        assert "lexical and hybrid" in result.stderr


def test_semantic_mode_exits_1_when_nothing_clears_the_floor(corpus, semantic):
    result = run("--corpus", corpus, "search", "--mode", "semantic", "medieval", "poetry", code=1)
    assert "similarity floor" in result.stderr
    out = run("--corpus", corpus, "search", "--mode", "semantic", "car", "accidents", "-f", "json")
    hits = json.loads(out.stdout)
    assert hits[0]["abstract"].startswith("We study automobile")
    assert all(hit["score"] >= 0.25 for hit in hits)


def test_hybrid_exits_1_when_neither_words_nor_meaning_match(corpus, semantic):
    """Observed: a hybrid search returned every paper of a small library for any query (the
    dense side's top 100, whatever their similarity), so a hybrid search never found nothing
    and ``--format ids | export --ids -`` exported everything. A paper the words do not match
    is a hybrid hit only when it clears the semantic floor."""
    run("--corpus", corpus, "search", "--mode", "hybrid", "medieval", "poetry", code=1)
    out = run("--corpus", corpus, "search", "--mode", "hybrid", "giraffe", "-f", "ids").stdout
    assert len(out.split()) < 5  # the giraffe paper, and only papers near it in meaning


def test_the_config_file_sets_the_default_mode(corpus, semantic, isolated):
    (isolated / "config.yaml").write_text("search:\n  mode: hybrid\n", encoding="utf-8")
    assert "automobile" in run("--corpus", corpus, "search", "cars").stdout
    assert run("--corpus", corpus, "search", "--mode", "lexical", "cars", code=1)
    (isolated / "config.yaml").write_text("search:\n  mode: fuzzy\n", encoding="utf-8")
    assert "search.mode must be one of" in run("--corpus", corpus, "search", "x", code=2).stderr


def test_similar_by_meaning_excludes_the_paper_itself(corpus, tmp_path, semantic):
    lib = lib_of(corpus, tmp_path)
    traffic = next(p for p in lib.papers if "TrafficRL" in p.abstract)
    hits = lib.similar(traffic.id, limit=2, mode="semantic")
    assert traffic.id not in [h.paper.id for h in hits]
    assert hits[0].paper.abstract.startswith("We study automobile crash safety")


def test_a_lexical_search_does_not_import_the_semantic_extra(corpus, tmp_path):
    script = (
        "import sys; from rlpapers import Library; "
        f"Library([{str(corpus)!r}], {str(tmp_path / 'index')!r}).search('automobile'); "
        "print(sorted({'numpy', 'onnxruntime', 'tokenizers'} & set(sys.modules)))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert proc.stdout.strip() == "[]"


def test_an_unchanged_store_is_not_checked_paper_by_paper(corpus, tmp_path, semantic, monkeypatch):
    from rlpapers.store.embeddings import EmbeddingTable

    lib_of(corpus, tmp_path).embed()
    scans: list[int] = []
    original = EmbeddingTable.texts
    monkeypatch.setattr(EmbeddingTable, "texts", lambda self: scans.append(1) or original(self))
    lib_of(corpus, tmp_path).search("cars", mode="hybrid")
    assert scans == []
    _write(corpus / "a.txt", VEHICLES.replace("giraffe herds", "zebra herds"))
    assert lib_of(corpus, tmp_path).embed()["embedded"] == 1
    assert scans


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_similar_text_ranks_a_paragraph_by_meaning_in_every_mode(corpus, tmp_path, semantic, mode):
    """``similar --text`` takes plain text in the modes by meaning too: the paragraph's
    operators and colons are words, and it ranks as a search of its words does."""
    lib = lib_of(corpus, tmp_path)
    text = "Cars: (drivers) AND crashes -- how safe are automobiles on highways?"
    found = [h.paper.id for h in lib.similar_text(text, mode=mode)]
    assert found and lib.get(found[0]).abstract.startswith("We study automobile crash safety")
    words = "Cars drivers and crashes how safe are automobiles on highways"
    assert found == [h.paper.id for h in lib.search(words, mode=mode)]


def test_similar_by_both_fuses_the_lexical_and_the_semantic_neighbours(corpus, tmp_path, semantic):
    from rlpapers.semantic import modes

    lib = lib_of(corpus, tmp_path)
    traffic = next(p for p in lib.papers if "TrafficRL" in p.abstract)
    lexical = [(h.paper.id, h.score) for h in lib.similar(traffic.id, 100)]
    dense = [(h.paper.id, h.score) for h in lib.similar(traffic.id, 100, mode="semantic")]
    hits = lib.similar(traffic.id, mode="hybrid")
    assert [h.paper.id for h in hits] == [pid for pid, _ in modes.fuse(lexical, dense)][:10]
    assert traffic.id not in [h.paper.id for h in hits]
