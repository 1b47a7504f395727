"""The sentence encoder: all-MiniLM-L6-v2 as int8 ONNX, run with onnxruntime.

A sentence vector is the mean of the model's token vectors under the attention mask, divided by
its length (what sentence-transformers does for this model). Texts are truncated at 256
WordPiece tokens and, when several go into one model call, padded with id 0 to the longest.

Speed comes from running texts side by side, not from batching them: each model call runs on
one thread (``intra_op_num_threads=1``), and one Python thread per core feeds the shared
session (onnxruntime releases the GIL while it computes). onnxruntime's own thread pool splits
every small operator of one text over the cores and spins while it waits, which cost twice the
CPU for the same work on 2 cores (about 60 ms a paper instead of 27), and more when other
processes want the cores. One text per call keeps every vector bit-identical to the vector of
that text alone (tests/test_speed.py checks it on the bundled papers).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from . import MODEL_DIR, MODEL_NAME

DIMENSIONS = 384
MAX_TOKENS = 256
#: Texts per model call. The int8 model quantises its activations per call (dynamic
#: quantisation), so a text padded in a batch gets a slightly different vector (cosine ~0.99)
#: than alone; one text per call keeps a paper's vector independent of its neighbours, and
#: measured no slower on 2 cores (no padding to compute).
BATCH_SIZE = 1
#: CPU seconds one core spends on an arXiv abstract (about 250 tokens): ``rlpapers embed`` of
#: 1,000 of them took 21.9 s of CPU. For time estimates before long jobs
#: (benchmarks/semantic_bench.py sets the estimate beside the real time).
PAPER_CPU_SECONDS = 0.022


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class Encoder:
    """Texts in, unit float32 vectors out (one row per text)."""

    def __init__(self, folder: Path, name: str) -> None:
        self.folder = folder
        self.name = name
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.log_severity_level = 3
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self.workers = cores()
        self.session = ort.InferenceSession(
            str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )

    @classmethod
    @cache
    def shipped(cls) -> Encoder:
        return cls(MODEL_DIR, MODEL_NAME)

    @property
    def model_hash(self) -> str:
        """sha256 of model.onnx and tokenizer.json: stored with each vector, so a change re-embeds."""
        return files_hash(self.folder)

    def seconds(self, papers: int) -> float:
        """About how long embedding ``papers`` abstracts takes on this machine's cores."""
        return papers * PAPER_CPU_SECONDS / self.workers

    def embed(
        self,
        texts: Sequence[str],
        batch_size: int = BATCH_SIZE,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        """A ``len(texts) x 384`` float32 matrix of unit vectors; ``progress(n)`` after each batch.
        Batches run side by side, one a core, on threads that end before this returns (no
        thread outlives the call, so a process that forks later forks no idle thread)."""
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        # Longest first, so that no long text is left alone on one core at the end; texts of
        # similar length share a batch, so little time goes into padding.
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
        work = [[texts[i] for i in rows] for rows in batches]
        if len(work) < 2 or self.workers < 2:
            self._fill(out, batches, map(self._embed_batch, work), progress)
            return out
        with ThreadPoolExecutor(self.workers, thread_name_prefix="rlpapers-embed") as pool:
            self._fill(out, batches, pool.map(self._embed_batch, work), progress)
        return out

    @staticmethod
    def _fill(
        out: np.ndarray,
        batches: list[list[int]],
        done: Iterable[np.ndarray],
        progress: Callable[[int], None] | None,
    ) -> None:
        for rows, vectors in zip(batches, done, strict=True):
            out[rows] = vectors
            if progress is not None:
                progress(len(rows))

    def embed_one(self, text: str) -> np.ndarray:
        vector: np.ndarray = self.embed([text])[0]
        return vector

    def _embed_batch(self, texts: Iterable[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch([t or " " for t in texts])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        (hidden,) = self.session.run(["last_hidden_state"], feeds)
        return mean_pool(hidden, mask)


def mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean of the token vectors where ``mask`` is 1, then L2-normalised (rows of unit length)."""
    weights = mask[:, :, None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    pooled = summed / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    unit: np.ndarray = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
    return unit


@cache
def files_hash(folder: Path) -> str:
    digest = hashlib.sha256()
    for name in ("model.onnx", "tokenizer.json"):
        digest.update(hashlib.sha256((folder / name).read_bytes()).digest())
    return digest.hexdigest()
