"""The semantic package: install hint, fusion math, dense top-k, and the shipped model.

Fusion and the install hint need nothing optional; the rest skips when the ``semantic`` extra
(numpy, onnxruntime, tokenizers) is not installed.
"""

from __future__ import annotations

import hashlib
import re
import sys

import pytest

from rlpapers.errors import InputError
from rlpapers.semantic import INSTALL_HINT, SemanticUnavailable, check_available, fusion


@pytest.mark.parametrize("module", ["numpy", "onnxruntime", "tokenizers"])
def test_missing_extra_names_the_install_command(monkeypatch, module):
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` raise ImportError
    with pytest.raises(SemanticUnavailable) as caught:
        check_available()
    message = str(caught.value)
    assert "pip install 'rlpapers[semantic]'" in message
    assert module in message
    assert isinstance(caught.value, InputError)  # the CLI maps it to exit 2
    assert INSTALL_HINT in message


def test_minmax_fusion_rescales_each_side_and_weights_them():
    lexical = [("a", 10.0), ("b", 6.0), ("c", 2.0)]
    dense = [("c", 0.9), ("d", 0.5), ("a", 0.1)]
    fused = dict(fusion.minmax(lexical, dense, weight=0.25))
    assert fused["a"] == pytest.approx(0.75 * 1.0 + 0.25 * 0.0)
    assert fused["b"] == pytest.approx(0.75 * 0.5)
    assert fused["c"] == pytest.approx(0.75 * 0.0 + 0.25 * 1.0)
    assert fused["d"] == pytest.approx(0.25 * 0.5)
    assert [doc for doc, _ in fusion.minmax(lexical, dense, weight=0.25)] == ["a", "b", "c", "d"]
    assert [doc for doc, _ in fusion.minmax(lexical, dense, weight=0.9)][0] == "c"


def test_minmax_of_equal_scores_is_one_not_a_division_by_zero():
    assert fusion.normalise([("a", 3.0), ("b", 3.0)]) == {"a": 1.0, "b": 1.0}
    assert fusion.normalise([]) == {}


def test_rrf_sums_weighted_reciprocal_ranks():
    lexical = [("a", 9.0), ("b", 1.0)]
    dense = [("b", 0.8), ("c", 0.7)]
    fused = dict(fusion.rrf(lexical, dense, weight=0.4, k=60))
    assert fused["a"] == pytest.approx(0.6 / 61)
    assert fused["b"] == pytest.approx(0.6 / 62 + 0.4 / 61)
    assert fused["c"] == pytest.approx(0.4 / 62)
    assert [doc for doc, _ in fusion.rrf(lexical, dense, weight=0.4)] == ["b", "a", "c"]


def test_fusion_ties_follow_the_lexical_order():
    lexical = [("x", 1.0), ("y", 1.0)]
    assert [doc for doc, _ in fusion.rrf(lexical, [], weight=0.0)] == ["x", "y"]
    assert [doc for doc, _ in fusion.minmax([], [("q", 1.0), ("p", 1.0)])] == ["q", "p"]


# --- below: needs the semantic extra ------------------------------------------------------------


@pytest.fixture(scope="module")
def np():
    return pytest.importorskip("numpy")


@pytest.fixture(scope="module")
def encoder():
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tokenizers")
    from rlpapers.semantic import load_encoder

    return load_encoder()


def test_dense_top_k_is_ordered_and_respects_allowed_rows(np):
    from rlpapers.semantic.dense import top_k

    matrix = np.eye(4, dtype=np.float32)
    query = np.array([0.1, 0.9, 0.5, 0.0], dtype=np.float32)
    assert [row for row, _ in top_k(matrix, query, 3)] == [1, 2, 0]
    assert top_k(matrix, query, 1)[0][1] == pytest.approx(0.9)
    assert [row for row, _ in top_k(matrix, query, 10, rows=np.array([0, 3]))] == [0, 3]
    assert top_k(matrix, query, 5, rows=np.array([], dtype=np.int64)) == []


def test_mean_pool_ignores_padding(np):
    from rlpapers.semantic.encoder import mean_pool

    hidden = np.array([[[3.0, 0.0], [0.0, 4.0], [100.0, 100.0]]], dtype=np.float32)
    mask = np.array([[1, 1, 0]])
    assert mean_pool(hidden, mask)[0] == pytest.approx([0.6, 0.8])


def test_embeddings_are_unit_rows_of_384_floats(encoder, np):
    vectors = encoder.embed(["entropy-regularised policies", "", "a much longer text " * 200])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1.0, 1.0, 1.0], abs=1e-5)


def test_a_text_gets_the_same_vector_whatever_its_neighbours(encoder, np):
    short = "Q-learning converges under a decaying step size."
    alone = encoder.embed_one(short)
    batch = encoder.embed(["a far longer neighbour " * 10, short, "another"])
    assert np.array_equal(alone, batch[1])
    padded = encoder.embed([short, "a far longer neighbour " * 10], batch_size=2)
    assert float(alone @ padded[0]) > 0.95  # padding under the mask changes little


def test_a_query_is_close_to_a_paper_that_shares_no_keyword(encoder, np):
    query = "cars"
    papers = [
        "Automobile crash testing: vehicle safety during collisions on highways.",
        "Protein folding predicted from amino-acid sequences with attention networks.",
        "Monetary policy and inflation expectations in emerging economies.",
    ]
    words = lambda text: set(re.findall(r"\w+", text.lower()))  # noqa: E731
    assert not words(query) & words(papers[0])  # the premise: no keyword in common
    vectors = encoder.embed(papers)
    similarity = vectors @ encoder.embed_one(query)
    assert int(similarity.argmax()) == 0
    assert similarity[0] - max(similarity[1:]) > 0.15


def test_shipped_files_match_the_hashes_in_their_readme():
    from rlpapers.semantic import MODEL_DIR

    readme = (MODEL_DIR / "README.md").read_text(encoding="utf-8")
    for name in ("model.onnx", "tokenizer.json"):
        digest = hashlib.sha256((MODEL_DIR / name).read_bytes()).hexdigest()
        assert re.search(rf"`{re.escape(name)}` \| [\d,]+ \| `{digest}`", readme), name


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("cars and trucks", "cars and trucks"),
        ("topic:finance cars", "cars"),
        ('title:entropy "soft actor" quantiz* entropi~2', "entropy soft actor quantiz entropi"),
        ("automobiles NOT traffic", "automobiles"),
        ("a NOT (b OR c) d", "a d"),
        ("author:smith AND text:regret", "regret"),
    ],
)
def test_the_dense_side_reads_only_the_prose_a_query_asks_for(query, text):
    from rlpapers.querylang import check, meaning_text

    assert meaning_text(check(query)) == text


def test_rrf_lets_the_other_side_break_a_tie():
    lexical = [("a", 2.0), ("b", 2.0), ("c", 1.0)]
    ranks = dict(fusion._ranks(lexical))
    assert ranks == {"a": 1, "b": 1, "c": 3}
    assert [doc for doc, _ in fusion.rrf(lexical, [("b", 0.9), ("a", 0.8)], weight=0.4)][0] == "b"


def test_a_title_the_abstract_already_holds_is_not_embedded_twice():
    pytest.importorskip("numpy")
    pytest.importorskip("onnxruntime")
    from rlpapers.semantic.vectors import embedded_text

    assert embedded_text("TECRL: entropy", "We propose X.") == "TECRL: entropy. We propose X."
    assert embedded_text("Shear flow past a plate…", "simple shear flow past a plate .") == (
        "simple shear flow past a plate ."
    )
    assert embedded_text("", "Only an abstract.") == "Only an abstract."
