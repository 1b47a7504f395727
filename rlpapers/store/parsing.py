"""Parsing changed corpus files, on two processes when there is enough text to pay for it."""

from __future__ import annotations

import os
import re
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
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


def parse_many(jobs: Iterable[Job], count: int, size: int) -> Iterator[Parsed]:
    """Parse each job (``count`` of them, ``size`` bytes in all), in order. Jobs are taken from
    the iterable only a few ahead of the results, so at most a few files are in memory."""
    if count < 2 or size < PARALLEL_BYTES or (os.cpu_count() or 1) < 2:
        yield from (parse_one(job) for job in jobs)
        return
    from collections import deque
    from concurrent.futures import Future, ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=2) as pool:
        pending: deque[Future[Parsed]] = deque()
        for job in jobs:
            pending.append(pool.submit(parse_one, job))
            if len(pending) >= 4:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def parse_one(job: Job) -> Parsed:
    from ..keys import base_key

    data, name, titles, encoding = job
    with warnings.catch_warnings(record=True) as caught:  # a worker process cannot show them
        warnings.simplefilter("always")
        papers = parse_bytes(data, name, titles=titles, encoding=encoding)
    counts: Counter[str] = Counter()
    for paper in papers:  # one paper at a time: no list of every word of the file
        counts.update(_WORDS.findall(f"{paper.name} {paper.title} {paper.abstract}".lower()))
    vocab = dict(counts)
    return Parsed(
        ids=[p.id for p in papers],
        bases=[base_key(p) for p in papers],
        rows=[p.to_dict() for p in papers],
        vocab=vocab,
        warnings=[str(w.message) for w in caught if issubclass(w.category, ParseWarning)],
    )
