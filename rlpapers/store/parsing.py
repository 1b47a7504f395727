"""Parsing changed corpus files, on two processes when there is enough text to pay for it."""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ParseWarning
from ..parse import parse_bytes

PARALLEL_BYTES = 2_000_000  # below this much text to parse, one process is quicker
_WORDS = re.compile(r"[a-z][a-z\-']+[a-z]")

Titles = Mapping[str, tuple[str, str]]


@dataclass(frozen=True)
class Parsed:
    """One file's parse, as the store keeps it: rows in file order, their content ids and base
    keys, the file's word counts (for spelling suggestions), and what the parser warned about."""

    ids: list[str]
    bases: list[str]
    rows: list[dict[str, Any]]
    vocab: dict[str, int]
    warnings: list[str]


Job = tuple[bytes, str, Titles, str | None]  # bytes, file name, known titles, encoding


def parse_many(jobs: list[Job]) -> Iterator[Parsed]:
    """Parse each job, in order."""
    if (
        len(jobs) < 2
        or sum(len(job[0]) for job in jobs) < PARALLEL_BYTES
        or (os.cpu_count() or 1) < 2
    ):
        yield from (parse_one(job) for job in jobs)
        return
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=2) as pool:
        yield from pool.map(parse_one, jobs, chunksize=1)


def parse_one(job: Job) -> Parsed:
    from ..keys import base_key

    data, name, titles, encoding = job
    with warnings.catch_warnings(record=True) as caught:  # a worker process cannot show them
        warnings.simplefilter("always")
        papers = parse_bytes(data, name, titles=titles, encoding=encoding)
    vocab: dict[str, int] = {}
    for paper in papers:
        for word in _WORDS.findall(f"{paper.name} {paper.title} {paper.abstract}".lower()):
            vocab[word] = vocab.get(word, 0) + 1
    return Parsed(
        ids=[p.id for p in papers],
        bases=[base_key(p) for p in papers],
        rows=[p.to_dict() for p in papers],
        vocab=vocab,
        warnings=[str(w.message) for w in caught if issubclass(w.category, ParseWarning)],
    )
