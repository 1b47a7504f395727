"""The sentence encoder: all-MiniLM-L6-v2 as int8 ONNX, run with onnxruntime.

A sentence vector is the mean of the model's token vectors under the attention mask, divided by
its length (what sentence-transformers does for this model). Texts are truncated at 256
WordPiece tokens and, when several go into one model call, padded with id 0 to the longest.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
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

    def embed(
        self,
        texts: Sequence[str],
        batch_size: int = BATCH_SIZE,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        """A ``len(texts) x 384`` float32 matrix of unit vectors; ``progress(n)`` after each batch."""
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        # Texts of similar length share a batch, so little time goes into padding.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            out[rows] = self._embed_batch([texts[i] for i in rows])
            if progress is not None:
                progress(len(rows))
        return out

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
