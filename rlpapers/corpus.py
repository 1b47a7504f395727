"""A corpus: which files, their records merged and deduplicated, citation keys, YAML overrides."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
    "algorithm", "system", "study", "analysis",
}  # fmt: skip


def corpus_files(paths: Iterable[Path]) -> list[Path]:
    """Expand folders to their ``*.txt`` files (sorted); a missing path is a ``CorpusError``."""
    files: dict[Path, None] = {}
    for path in paths:
        if path.is_dir():
            found = sorted(path.glob("*.txt"))
            if not found:
                warnings.warn(ParseWarning(f"{path}: no *.txt files in this folder"), stacklevel=2)
            for file in found:
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

    known = bases or {}
    items = [(p.id, known.get(p.id) or base_key(p)) for p in papers]
    overrides = [o for path in metadata_files for o in read_overrides(path)]
    finisher = plan(items, duplicate_groups(papers), overrides)
    return [done for paper in papers if (done := finisher(paper)) is not None]


def duplicate_groups(papers: Iterable[Paper]) -> dict[str, list[Paper]]:
    """Every copy of each abstract that occurs more than once, in corpus order."""
    groups: dict[str, list[Paper]] = {}
    for paper in papers:
        groups.setdefault(paper.id, []).append(paper)
    return {pid: copies for pid, copies in groups.items() if len(copies) > 1}


@dataclass
class Finisher:
    """Finishes records one at a time, from a plan made over the whole corpus (``plan``).

    Called with each parsed paper in corpus order, it returns the finished record, or None for
    a later copy of an abstract already returned (copies merge into the first).
    """

    keys: dict[str, str]
    merged: dict[str, Paper]
    changes: dict[str, dict[str, Any]]
    emitted: set[str] = field(default_factory=set)

    def __call__(self, paper: Paper) -> Paper | None:
        pid = paper.id
        if pid in self.merged:
            if pid in self.emitted:
                return None
            self.emitted.add(pid)
            paper = self.merged[pid]
        return paper.with_changes(key=self.keys[pid], **self.changes.get(pid, {}))


def plan(
    items: Iterable[tuple[str, str]], duplicates: dict[str, list[Paper]], overrides: list[Override]
) -> Finisher:
    """Keys, merges and overrides for a corpus known by (id, base key) pairs in corpus order.

    Only the duplicated abstracts are needed in full: a corpus can be finished as a stream.
    """
    merged = {pid: _merge_all(copies) for pid, copies in duplicates.items()}
    bases: dict[str, str] = {}
    for pid, base in items:
        bases.setdefault(pid, base)
    for pid, paper in merged.items():
        bases[pid] = base_key(paper)  # the merged record may have gained its authors
    keys = keys_from_bases(bases)
    return Finisher(keys, merged, _override_changes(overrides, keys))


def _merge_all(copies: list[Paper]) -> Paper:
    first = copies[0]
    for other in copies[1:]:
        first = _merge(first, other)
    return first


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
    keys = keys_from_bases({paper.id: known.get(paper.id) or base_key(paper) for paper in papers})
    return [
        paper if paper.key == keys[paper.id] else paper.with_changes(key=keys[paper.id])
        for paper in papers
    ]


def keys_from_bases(bases: dict[str, str]) -> dict[str, str]:
    """Paper id -> key: the base key, with a, b, c… added (in id order) where bases collide.

    A suffixed key never takes a key that another paper has as its own base ("chen_post" + "a"
    skips "chen_posta" when a paper is named PostA).
    """
    groups: dict[str, list[str]] = {}
    for paper_id, base in bases.items():
        groups.setdefault(base, []).append(paper_id)
    keys = {ids[0]: base for base, ids in groups.items() if len(ids) == 1}
    taken = set(keys.values())
    for base in sorted(b for b, ids in groups.items() if len(ids) > 1):
        n = 0
        for paper_id in sorted(groups[base]):
            while base + _suffix(n) in taken:
                n += 1
            keys[paper_id] = base + _suffix(n)
            taken.add(keys[paper_id])
            n += 1
    return keys


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
        if (
            len(ascii_word) > 2
            and ascii_word not in _KEY_STOP
            and previous not in {"that", "which"}
        ):
            return ascii_word
        previous = ascii_word
    return ""


# --- overrides ---------------------------------------------------------------------------------


def _override_changes(overrides: list[Override], keys: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Paper id -> the fields its overrides set. ``keys`` is updated with renamed keys."""
    by_key = {key: pid for pid, key in keys.items()}
    changes: dict[str, dict[str, Any]] = {}
    for override in overrides:
        pid = override.target if override.target in keys else by_key.get(override.target)
        if pid is None:
            message = f"{override.source}:{override.line}: no paper with id or key {override.target!r}, ignored"
            warnings.warn(ParseWarning(message), stacklevel=3)
            continue
        changes.setdefault(pid, {}).update(override.values)
    for pid, values in changes.items():
        if "key" in values:
            keys[pid] = values.pop("key")
    _check_unique_keys(keys, overrides)
    return changes


def _check_unique_keys(keys: dict[str, str], overrides: list[Override]) -> None:
    seen: set[str] = set()
    for key in keys.values():
        if key in seen:
            culprit = next((o for o in overrides if o.values.get("key") == key), None)
            where = (culprit.source, culprit.line) if culprit else ("", None)
            raise ParseError(f"key {key!r} is used by two papers", where[0], where[1])
        seen.add(key)


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
