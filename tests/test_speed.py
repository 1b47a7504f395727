"""Speed work that must not change results: the encoder runs texts side by side on one-thread
model calls, and every vector stays what the text gets alone.

Skips when the ``semantic`` extra (numpy, onnxruntime, tokenizers) is not installed.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def np():
    return pytest.importorskip("numpy")


@pytest.fixture(scope="module")
def encoder():
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tokenizers")
    from rlpapers.semantic import load_encoder

    return load_encoder()


@pytest.fixture(scope="module")
def bundled_texts():
    from rlpapers import load_corpus
    from rlpapers.semantic.vectors import paper_text

    texts = [paper_text(p) for p in load_corpus([ROOT / "seeds"]).papers]
    assert len(texts) > 20
    return texts


def alone_in_a_default_session(texts, np):
    """Each text embedded alone by a session with onnxruntime's default threading: how the
    encoder embedded papers before it ran them side by side."""
    import onnxruntime as ort

    from rlpapers.semantic import MODEL_DIR
    from rlpapers.semantic.encoder import mean_pool

    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(
        str(MODEL_DIR / "model.onnx"), options, providers=["CPUExecutionProvider"]
    )
    from rlpapers.semantic import load_encoder

    tokenizer = load_encoder().tokenizer
    rows = []
    for text in texts:
        encoding = tokenizer.encode(text or " ")
        ids = np.array([encoding.ids], dtype=np.int64)
        mask = np.array([encoding.attention_mask], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        (hidden,) = session.run(["last_hidden_state"], feeds)
        rows.append(mean_pool(hidden, mask)[0])
    return np.vstack(rows)


def test_every_bundled_paper_keeps_its_vector(encoder, bundled_texts, np):
    together = encoder.embed(bundled_texts)
    before = alone_in_a_default_session(bundled_texts, np)
    cosines = (together * before).sum(axis=1)
    assert cosines.min() >= 0.99
    alone = np.vstack([encoder.embed_one(text) for text in bundled_texts])
    assert np.array_equal(together, alone)  # side by side changes no bit


def test_model_calls_run_on_one_thread_each(encoder):
    options = encoder.session.get_session_options()
    assert options.intra_op_num_threads == 1
    assert options.inter_op_num_threads == 1


def test_texts_run_side_by_side_one_thread_a_core(encoder, monkeypatch):
    monkeypatch.setattr(encoder, "workers", 2)
    barrier = threading.Barrier(2, timeout=10)
    run = encoder._embed_batch
    seen = set()

    def meeting(texts):  # returns only when a second thread runs a text at the same time
        seen.add(threading.get_ident())
        barrier.wait()
        return run(texts)

    monkeypatch.setattr(encoder, "_embed_batch", meeting)
    vectors = encoder.embed(["policy gradient", "value iteration", "bandits", "exploration"])
    assert vectors.shape == (4, 384)
    assert len(seen) == 2
    assert not [t for t in threading.enumerate() if t.name.startswith("rlpapers-embed")]


def test_the_estimate_scales_with_papers_and_cores(encoder, monkeypatch):
    monkeypatch.setattr(encoder, "workers", 1)
    one_core = encoder.seconds(3000)
    monkeypatch.setattr(encoder, "workers", 2)
    assert encoder.seconds(3000) == pytest.approx(one_core / 2)
    assert encoder.seconds(6000) == pytest.approx(one_core)


@pytest.mark.parametrize("seconds", [61, 95, 119, 120, 149, 151, 299, 601, 3599, 7300])
def test_the_estimate_in_words_stays_within_a_fifth(seconds):
    from rlpapers.errors import EmbeddingsMissing

    number, unit = EmbeddingsMissing(9000, seconds).duration.split()
    said = int(number) * (60 if unit == "minutes" else 1)
    assert unit in {"seconds", "minutes"}
    assert abs(said - seconds) <= 0.2 * seconds


LIST_MODULES = """
import json, sys
from rlpapers.cli import main
sys.argv = ["rlpapers", "list", "--format", "ids"]
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


@pytest.mark.slow
def test_a_warm_list_never_loads_openssl(tmp_path):
    """Ids and the index folder's name are hashed with CPython's own ``_sha1``
    (``rlpapers.digest``): ``hashlib`` loads OpenSSL, about 5% of a warm ``list``."""
    import json
    import subprocess
    import sys

    env = {
        "RLPAPERS_INDEX_DIR": str(tmp_path / "index"),
        "RLPAPERS_DATA_DIR": str(tmp_path / "data"),
        "HOME": str(tmp_path),
        "PATH": "",
    }
    run = [sys.executable, "-c", LIST_MODULES]
    subprocess.run(run, env=env, check=True, capture_output=True)  # builds the store
    done = subprocess.run(run, env=env, check=True, capture_output=True, text=True)
    loaded = set(json.loads(done.stderr.splitlines()[-1]))
    assert len(done.stdout.split()) == 40
    assert not loaded & {"hashlib", "_hashlib"}
