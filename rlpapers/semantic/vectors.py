"""Paper vectors kept in the record store, and the searches made with them.

``Vectors`` embeds what the store lacks (new papers, edited ones, or all of them after a model
change), in batches that are each committed, and loads the stored vectors into one float32 matrix
for dense search. Vectors are stored as float16 (768 bytes a paper instead of 1,536); converting
75k of them to float32 once per process takes milliseconds and changed no Cranfield ranking
measurably (benchmarks/semantic_eval.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from . import MODEL_DIR, MODEL_NAME, load_encoder, model_files
from .dense import top_k
from .encoder import DIMENSIONS, Encoder, files_hash

if TYPE_CHECKING:
    from ..model import Paper
    from ..store import Store

STORED = np.float16
#: Papers per committed batch: an interrupted run loses at most this many.
COMMIT_EVERY = 64


def paper_text(paper: Paper) -> str:
    """What is embedded: the title (real or derived) and the abstract."""
    return embedded_text(paper.title, paper.abstract)


def embedded_text(title: str, abstract: str) -> str:
    """``title. abstract``, or the abstract alone when it already holds the title (as derived
    titles taken from the abstract's opening do): a repeated title would weigh twice."""
    title = title.strip()
    if not title or title.rstrip("…").strip().casefold() in abstract.casefold():
        return abstract
    return f"{title}. {abstract}"


def text_digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def model_tag() -> str:
    """The model's name and a prefix of its files' hash, stored with every vector."""
    with model_files():
        return f"{MODEL_NAME}:{files_hash(MODEL_DIR)[:16]}"


@dataclass(frozen=True)
class Matrix:
    """Stored vectors as one float32 matrix; ``row[id]`` is a paper's row."""

    ids: list[str]
    vectors: np.ndarray

    @cached_property
    def row(self) -> dict[str, int]:
        return {pid: i for i, pid in enumerate(self.ids)}


class Vectors:
    """The vectors of one store's papers, for one model."""

    def __init__(self, store: Store, model: str | None = None) -> None:
        self.store = store
        self.model = model or model_tag()

    @cached_property
    def encoder(self) -> Encoder:
        return load_encoder()

    def missing(self) -> list[str]:
        """Ids of the papers with no vector of this model for their current text (none, at
        once, when no record changed since every paper last had one)."""
        return self.store.reading(self._missing)

    def _missing(self) -> list[str]:
        table = self.store.embeddings
        state = "{}:{}".format(*self.store.counter)
        if table.complete_at(self.model) == state:
            return []
        stored = table.digests(self.model)
        missing = [
            pid
            for pid, title, abstract in table.texts()
            if stored.get(pid) != text_digest(embedded_text(title, abstract))
        ]
        if not missing:
            table.mark_complete(self.model, state)
        return missing

    def embed_missing(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Embed every paper that lacks a current vector; drop vectors of gone papers and other
        models first. Returns how many papers were embedded. (A store found damaged on the
        way heals, and the work starts again on the rebuilt one.)"""
        return self.store.reading(lambda: self._embed_missing(progress))

    def _embed_missing(self, progress: Callable[[int, int], None] | None) -> int:
        self.store.embeddings.prune(self.model)
        ids = self.missing()
        papers = self.store.fetch(ids)
        done = self.embed([papers[i] for i in ids if i in papers], progress)
        self.missing()  # marks the store complete at its current state
        return done

    def embed(
        self,
        papers: list[Paper],
        progress: Callable[[int, int], None] | None = None,
        batch: int | None = None,
    ) -> int:
        """Embed and store ``papers``, committing every ``batch`` (``COMMIT_EVERY``); returns
        how many were stored."""
        batch = batch or COMMIT_EVERY
        table = self.store.embeddings
        done = 0
        if progress:
            progress(0, len(papers))
        for start in range(0, len(papers), batch):
            part = papers[start : start + batch]
            texts = [paper_text(p) for p in part]
            vectors = self.encoder.embed(texts).astype(STORED)
            table.put(
                self.model,
                [
                    (p.id, text_digest(t), v.tobytes())
                    for p, t, v in zip(part, texts, vectors, strict=True)
                ],
            )
            done += len(part)
            if progress:
                progress(done, len(papers))
        self.__dict__.pop("matrix", None)
        return done

    @cached_property
    def matrix(self) -> Matrix:
        """Every stored vector as float32 rows, filled one row at a time (no second copy)."""
        return self.store.reading(self._matrix)

    def _matrix(self) -> Matrix:
        table = self.store.embeddings
        vectors = np.empty((table.count(self.model), DIMENSIONS), dtype=np.float32)
        ids: list[str] = []
        for pid, blob in table.vectors(self.model, DIMENSIONS * np.dtype(STORED).itemsize):
            if len(ids) == len(vectors):  # a row written meanwhile by another process
                break
            vectors[len(ids)] = np.frombuffer(blob, dtype=STORED)
            ids.append(pid)
        return Matrix(ids, vectors[: len(ids)])

    def query(self, text: str) -> np.ndarray:
        return self.encoder.embed_one(text)

    def rank(
        self, vector: np.ndarray, k: int | None, among: Iterable[str] | None = None
    ) -> list[tuple[str, float]]:
        """(id, cosine) of the ``k`` closest papers (all when None), among ``among`` if given."""
        matrix = self.matrix
        rows = None
        if among is not None:
            rows = np.array([matrix.row[i] for i in among if i in matrix.row], dtype=np.int64)
        size = len(matrix.ids) if rows is None else len(rows)
        found = top_k(matrix.vectors, vector, size if k is None else k, rows)
        return [(matrix.ids[r], score) for r, score in found]

    def vector_of(self, paper_id: str) -> np.ndarray | None:
        """The paper's vector; one dropped as damage while the vectors were read is made again
        now (the paper's neighbours were none until the next run)."""
        row = self.matrix.row.get(paper_id)
        if row is None:
            found = self.store.reading(lambda: self.store.fetch([paper_id]))
            if paper_id not in found:
                return None
            self.embed([found[paper_id]])
            row = self.matrix.row.get(paper_id)
        return None if row is None else self.matrix.vectors[row]
