"""A corpus: which files, their records merged and deduplicated, citation keys, YAML overrides."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from typing import TYPE_CHECKING

from .errors import CorpusError, NotFoundError, ParseError, ParseWarning
from .model import Paper

if TYPE_CHECKING:
    from .metadata import Override

_KEY_STOP = {
    "a", "an", "the", "of", "for", "and", "in", "on", "to", "with", "via", "by", "from", "towards",
    "toward", "is", "are", "we", "our", "this", "that", "which", "these", "its", "into", "over",
    "novel", "new", "approach", "method", "methods", "framework", "frameworks", "paradigm",
    "efficient", "effective", "simple", "general", "unified", "first", "training", "model",
    "models", "learning", "reinforcement", "large", "language", "deep", "based", "using",
    "algorithm", "system", "study", "analysis", "towards",
}  # fmt: skip


def corpus_files(paths: Iterable[Path]) -> list[Path]:
    """Expand folders to their ``*.txt`` files (sorted); a missing path is a ``CorpusError``."""
    files: dict[Path, None] = {}
    for path in paths:
        if path.is_dir():
            for file in sorted(path.glob("*.txt")):
                files[file] = None
        elif path.is_file():
            files[path] = None
        else:
            raise CorpusError(f"corpus path does not exist: {path}")
    return list(files)


@dataclass(frozen=True)
class Corpus:
    files: tuple[Path, ...]
    papers: tuple[Paper, ...]

    def get(self, ref: str) -> Paper:
        return find_paper(self.papers, ref)


def load_corpus(paths: Iterable[Path | str] | None = None) -> Corpus:
    """Parse every file of the corpus (the bundled seeds by default) into finished records."""
    from .config import resolve

    if paths is None:
        paths = resolve().corpus
    from .metadata import sidecars
    from .parse import parse_file

    files = corpus_files(Path(p) for p in paths)
    parsed = [paper for file in files for paper in parse_file(file)]
    return Corpus(tuple(files), tuple(finish(parsed, sidecars(files))))


def finish(
    papers: list[Paper], metadata_files: Iterable[Path] = (), bases: dict[str, str] | None = None
) -> list[Paper]:
    """Deduplicate, assign citation keys, then apply metadata overrides.

    ``bases`` may give each paper's ``base_key`` by id, computed earlier (the index caches them).
    """
    from .metadata import read_overrides

    papers = assign_keys(deduplicate(papers), bases)
    overrides = [o for path in metadata_files for o in read_overrides(path)]
    return apply_overrides(papers, overrides)


def deduplicate(papers: list[Paper]) -> list[Paper]:
    """One record per abstract (ids are hashes of the normalised abstract), listing every source."""
    merged: dict[str, Paper] = {}
    for paper in papers:
        first = merged.get(paper.id)
        merged[paper.id] = _merge(first, paper) if first else paper
    return list(merged.values())


def _merge(first: Paper, other: Paper) -> Paper:
    return first.with_changes(
        authors=first.authors or other.authors,
        authors_truncated=first.authors_truncated if first.authors else other.authors_truncated,
        categories=first.categories or other.categories,
        topic=first.topic or other.topic,
        sources=first.sources + tuple(s for s in other.sources if s not in first.sources),
    )


# --- citation keys -----------------------------------------------------------------------------


def assign_keys(papers: list[Paper], known: dict[str, str] | None = None) -> list[Paper]:
    """Give every paper a unique, readable ASCII key; colliding keys get a, b, c… by id order."""
    known = known or {}
    bases = {paper.id: known.get(paper.id) or base_key(paper) for paper in papers}
    groups: dict[str, list[str]] = {}
    for paper_id, base in bases.items():
        groups.setdefault(base, []).append(paper_id)
    keys: dict[str, str] = {}
    for base, ids in groups.items():
        if len(ids) == 1:
            keys[ids[0]] = base
            continue
        for n, paper_id in enumerate(sorted(ids)):
            keys[paper_id] = base + _suffix(n)
    return [paper if paper.key == keys[paper.id] else paper.with_changes(key=keys[paper.id]) for paper in papers]


def _suffix(n: int) -> str:
    letters = ""
    n += 1
    while n:
        n, rem = divmod(n - 1, 26)
        letters = chr(ord("a") + rem) + letters
    return letters


def base_key(paper: Paper) -> str:
    """``surname_word``: the first author's surname and the paper's name or first key word."""
    surname = _ascii_word(surname_of(paper.authors[0])) if paper.authors else ""
    word = _ascii_word(paper.name) or _title_word(paper.title) or "paper"
    return f"{surname}_{word}" if surname else word


def surname_of(author: str) -> str:
    from .parse.text import PARTICLES

    words = author.replace(",", " ").split()
    if not words:
        return ""
    if len(words) == 1 and re.match(r"[\u3400-\u9fff]", words[0]):
        return words[0][0]  # Chinese names are written surname first: 王小明 -> 王
    tail = [words[-1]]
    for word in reversed(words[:-1]):
        if word.lower() not in PARTICLES:
            break
        tail.insert(0, word)
    return "".join(tail)


def _ascii_word(text: str) -> str:
    from anyascii import anyascii

    return re.sub(r"[^a-z0-9]", "", anyascii(text).lower())[:24]


def _title_word(title: str) -> str:
    """The first key word of a title, skipping stop words and the verb of a relative clause."""
    previous = ""
    for word in re.findall(r"[^\W_]+", title):
        if re.match(r"[\u3400-\u9fff]", word):
            word = word[:4]  # a CJK run is a whole clause; four characters make a word or two
        ascii_word = _ascii_word(word)
        if len(ascii_word) > 2 and ascii_word not in _KEY_STOP and previous not in {"that", "which"}:
            return ascii_word
        previous = ascii_word
    return ""


# --- overrides ---------------------------------------------------------------------------------


def apply_overrides(papers: list[Paper], overrides: list[Override]) -> list[Paper]:
    if not overrides:
        return papers
    index = {p.id: i for i, p in enumerate(papers)} | {p.key: i for i, p in enumerate(papers)}
    out = list(papers)
    for override in overrides:
        position = index.get(override.target)
        if position is None:
            message = f"{override.source}:{override.line}: no paper with id or key {override.target!r}, ignored"
            warnings.warn(ParseWarning(message), stacklevel=2)
            continue
        out[position] = out[position].with_changes(**override.values)
    _check_unique_keys(out, overrides)
    return out


def _check_unique_keys(papers: list[Paper], overrides: list[Override]) -> None:
    seen: dict[str, str] = {}
    for paper in papers:
        if paper.key in seen:
            culprit = next((o for o in overrides if o.values.get("key") == paper.key), None)
            where = (culprit.source, culprit.line) if culprit else ("", None)
            raise ParseError(f"key {paper.key!r} is used by two papers", where[0], where[1])
        seen[paper.key] = paper.id


# --- lookups -----------------------------------------------------------------------------------


def find_paper(papers: Iterable[Paper], ref: str) -> Paper:
    """The paper whose key or id is ``ref``, or whose id starts with it (a unique prefix of ≥ 4)."""
    ref = ref.strip()
    prefixed = []
    for paper in papers:
        if ref in (paper.key, paper.id):
            return paper
        if len(ref) >= 4 and paper.id.startswith(ref):
            prefixed.append(paper)
    if len(prefixed) == 1:
        return prefixed[0]
    if prefixed:
        raise NotFoundError(f"{ref!r} is ambiguous: it starts {len(prefixed)} ids")
    raise NotFoundError(f"no paper with id or key {ref!r}")


# --- filters -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Filters:
    """Field filters shared by ``list`` and ``search``: case- and accent-insensitive substrings.

    Repeating a filter ORs its values (``--category RL --category NLP``); different filters AND.
    """

    category: tuple[str, ...] = ()
    author: tuple[str, ...] = ()
    topic: tuple[str, ...] = ()
    source: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return any((self.category, self.author, self.topic, self.source))

    def matches(self, paper: Paper) -> bool:
        checks = (
            (self.category, paper.categories),
            (self.author, paper.authors),
            (self.topic, (paper.topic,)),
            (self.source, paper.sources or (paper.source,)),
        )
        return all(_any_contains(wanted, values) for wanted, values in checks if wanted)

    def apply(self, papers: Iterable[Paper]) -> list[Paper]:
        return [paper for paper in papers if self.matches(paper)]


def _any_contains(wanted: tuple[str, ...], values: Iterable[str]) -> bool:
    from .parse.text import fold

    folded = [fold(v) for v in values]
    return any(fold(w) in v for w in wanted for v in folded)
