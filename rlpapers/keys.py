"""Citation keys: how a paper's first key is derived, and which keys are allowed.

The default key is ``{auth}{year}{word}`` in lower-case ASCII, as Better BibTeX and Google
Scholar write it (``cheng2025reasoning``, ``zhan2025tecrl``); without a year it is
``{auth}_{word}`` (``zhan_tecrl``). The surname is the first author's, with its particles
(``van Gool`` -> ``vangool``) and without a suffix (``Robert W. Heath Jr.`` -> ``heath``). The word is the paper's introduced name (``TECRL``), else the first
distinctive word of its title (the real title, from metadata or the file, before the one derived
from the abstract): never a word of ``key_words.AVOIDED`` (function words, adverbs, filler
words), nor one of ``GENERIC_WORDS`` (words that would fit a thousand papers), nor an adverb in
*-ly*, and never a word cut in the middle. A paper without authors takes its name, else the
title's first two distinctive words, the year between them (``eigenvalues2025perturbations``).

A user's own format (``key_format``) replaces the rule. The identity ledger gives each paper its
key once, when it is first seen; this module only proposes it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Protocol

from .key_words import AVOIDED
from .model import Paper
from .text import ascii_word, starts_cjk, surname

#: What a key may look like: BibTeX-safe (no white space, no ``{}(),"#%=\\'~``), at most 100
#: characters, starting with a letter or digit.
SAFE_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-:./+]{0,99}")
SAFE_KEY_TEXT = "letters, digits and _ - : . / + (starting with a letter or digit, at most 100)"

#: Words a key may never be: true of too many papers to tell one from another.
GENERIC_WORDS = {
    # kinds of contribution
    "approach", "method", "methods", "framework", "frameworks", "paradigm", "technique",
    "algorithm", "algorithms", "system", "systems", "model", "models", "study", "analysis",
    "benchmark", "dataset", "datasets", "architecture", "pipeline", "strategy", "scheme",
    "procedure", "formulation", "objective", "objectives", "loss", "mechanism", "module",
    "agent", "agents", "solution", "tool", "toolkit", "library", "theory", "bound", "bounds",
    "evaluation", "explanation", "explanations", "survey", "review", "problem", "problems",
    "task", "tasks", "setting", "settings", "variant", "extension", "version",
    # qualities
    "novel", "new", "efficient", "effective", "simple", "general", "unified", "first", "better",
    "improved", "robust", "scalable", "practical", "intelligent", "adaptive", "dynamic",
    "contrastive", "generative", "lightweight", "principled", "flexible", "accurate", "fast",
    "large", "small", "deep", "high", "low", "lower", "upper", "multi", "single", "direct",
    "explicit", "implicit", "diverse", "automatic", "automated", "optimal", "stable",
    # the field itself
    "learning", "reinforcement", "training", "language", "neural", "network", "networks",
    "policy", "policies", "gradient", "gradients", "reward", "rewards", "value", "function",
    "functions", "data", "variance", "optimization", "optimisation", "inference", "reasoning",
    "exploration", "estimation", "prediction", "representation", "representations",
    "supervised", "unsupervised", "online", "offline", "based", "driven", "aware", "guided",
    "using", "towards",
    # verbs a derived title carries after "that"
    "employs", "uses", "enforces", "achieves", "integrates", "trains", "bypasses", "shifts",
    "adapts", "equips", "reasons", "improves", "enables", "learns", "combines", "leverages",
    "introduces", "proposes", "provides", "allows", "reduces", "outperforms", "applies",
}  # fmt: skip


#: The longest run of whole words a key's word may join (a multi-word name: ``Active Attacks``).
WORD_LIMIT = 24
#: A single word longer than this is not taken whole (an identifier, a run-on formula); shorter
#: words are never cut.
LONGEST_WORD = 40
#: A base key is at most this long, leaving room for the suffix a collision adds.
BASE_LIMIT = 90
#: How much of an abstract is searched for a word when no title offers one.
ABSTRACT_SPAN = 600
#: Endings of hyphenated compounds that a key drops (``VLM-based`` -> ``vlm``).
COMPOUND_TAILS = frozenset(
    "based driven aware guided free level like style oriented centric powered enabled "
    "specific agnostic assisted augmented conditioned informed inspired".split()
)
#: The word of a paper whose title gives none.
NO_WORD = "untitled"


class Rendering(Protocol):
    """A user's key format (``key_format.KeyFormat``): the key it makes of a paper."""

    def render(self, paper: Paper, derived: str) -> str: ...


def base_key(paper: Paper, format: Rendering | None = None, derived: str = "") -> str:
    """The key a paper would get if no other paper had it: the default rule, or ``format``.
    ``derived`` is the title derived from the abstract, where ``paper.title`` is a real title
    that may offer no distinctive word."""
    if format is not None:
        return format.render(paper, derived)
    family = ascii_word(surname(paper.authors[0]), LONGEST_WORD) if paper.authors else ""
    year = str(paper.year) if paper.year else ""
    if family:
        word = key_word(paper, derived) or NO_WORD
        return _capped(f"{family}{year}{word}" if year else f"{family}_{word}")
    name = name_word(paper.name)
    if name:
        return _capped(f"{name}{year}")
    strict = paper.title_derived
    opening = paper.abstract[:ABSTRACT_SPAN]
    words = title_words(paper.title, 2, strict) or title_words(derived, 2)
    if not words:
        single = title_word(paper.title, strict) or title_word(derived)
        words = [single] if single else title_words(opening, 2) or [NO_WORD]
    return _capped(year.join(words) if len(words) == 2 and year else "".join(words) + year)


#: The metadata fields a first key is made from (id-addressed metadata is read at first sight).
KEY_FIELDS = ("title", "year", "name")


def first_key(draft: Paper, fields: Mapping[str, Any], format: Rendering | None = None) -> str:
    """The base key of a paper first seen: its parsed ``draft`` with the metadata ``fields``
    that name it by id (title, year, name), by the default rule or ``format``. A metadata title
    is a real one; the derived title is then the fallback."""
    changes: dict[str, Any] = {k: fields[k] for k in KEY_FIELDS if k in fields}
    derived = ""
    if changes.get("title"):
        derived = draft.title if draft.title_derived else ""
        changes["title_derived"] = False
    return base_key(draft.with_changes(**changes) if changes else draft, format, derived)


def key_word(paper: Paper, derived: str = "") -> str:
    """The word a key gives a paper (``{word}``): its name, else the first distinctive word of
    its title, else of the derived title, else of the abstract ("In this paper" derives no
    title worth a word); '' if none. A real title's first word that is no
    listed word will do (``Reasoning with Exploration`` -> ``reasoning``, as Better BibTeX
    and Google Scholar take it); a derived title's must not be a generic word either."""
    return (
        name_word(paper.name)
        or title_word(paper.title, paper.title_derived)
        or title_word(derived)
        or title_word(paper.abstract[:ABSTRACT_SPAN])
    )


def name_word(name: str) -> str:
    """An introduced name as a key's word: its leading whole words, at most ``WORD_LIMIT``
    characters together (``Stratified GRPO`` -> ``stratifiedgrpo``); '' for a name that is only
    listed or generic words."""
    folded = [ascii_word(part, LONGEST_WORD + 1) for part in _words(name)]
    folded = [w for w in folded if w and len(w) <= LONGEST_WORD]
    if not folded or all(w in AVOIDED or w in GENERIC_WORDS for w in folded):
        return ""
    return _whole(folded, WORD_LIMIT)


def title_word(title: str, strict: bool = True) -> str:
    """A distinctive word of a title: the first that is not a listed word, an adverb or (with
    ``strict``, for a derived title) a generic word; failing that, its first two content words
    run together (no listed word). Words are whole: a hyphenated compound too long to keep
    whole gives its parts."""
    content = []
    for plain in _candidates(title):
        if plain in AVOIDED:
            continue
        content.append(plain)
        if _distinctive(plain, strict):
            return plain
    return "".join(content[:2]) if len(content) >= 2 else ""


def title_words(title: str, n: int, strict: bool = True) -> list[str]:
    """The first ``n`` distinctive words of a title (``title_word``'s), in order; fewer if it
    has fewer."""
    found: list[str] = []
    for plain in _candidates(title):
        if _distinctive(plain, strict) and plain not in found:
            found.append(plain)
            if len(found) == n:
                break
    return found


def _distinctive(word: str, strict: bool) -> bool:
    return (
        word not in AVOIDED
        and not (strict and word in GENERIC_WORDS)
        and not word.endswith("ly")
        and not word.isdigit()
    )


def _words(text: str) -> list[str]:
    """A text's words, hyphenated compounds whole but for an ending of ``COMPOUND_TAILS``; a
    LaTeX command (``\\Omega``) is no word."""
    out = []
    for word in re.findall(r"(?<![\\\w])[^\W_]+(?:-[^\W_]+)*", text):
        parts = word.split("-")
        while len(parts) > 1 and parts[-1].lower() in COMPOUND_TAILS:
            parts.pop()
        out.append("-".join(parts))
    return out


def _candidates(title: str) -> list[str]:
    """A title's words folded to lower-case ASCII, whole, in order; three letters or more."""
    out: list[str] = []
    for word in _words(title):
        if starts_cjk(word):
            word = word[:4]  # a CJK run is a whole clause; four characters make a word or two
        plain = ascii_word(word, LONGEST_WORD + 1)
        if len(plain) > WORD_LIMIT and "-" in word:
            parts = [ascii_word(part, LONGEST_WORD + 1) for part in word.split("-")]
            out.extend(part for part in parts if 2 < len(part) <= LONGEST_WORD)
        elif 2 < len(plain) <= LONGEST_WORD:
            out.append(plain)
    return out


def _whole(words: list[str], limit: int) -> str:
    """The leading ``words`` joined, as many as fit in ``limit`` characters (at least one)."""
    joined = words[0]
    for word in words[1:]:
        if len(joined) + len(word) > limit:
            break
        joined += word
    return joined


def _capped(key: str) -> str:
    """A key cut to ``BASE_LIMIT`` characters; only a key that long is cut."""
    return key[:BASE_LIMIT]


def keys_from_bases(bases: dict[str, str]) -> dict[str, str]:
    """Paper id -> key for a set of papers seen together with no ledger (``rlpapers parse``):
    the base key, with b, c, … added in id order after the first where bases collide."""
    groups: dict[str, list[str]] = {}
    for paper_id, base in bases.items():
        groups.setdefault(base, []).append(paper_id)
    taken = {base for base, ids in groups.items()}
    keys = {}
    for base, ids in groups.items():
        keys[ids[0]] = base
        n = 1
        for paper_id in sorted(ids[1:]):
            while base + key_suffix(n) in taken:
                n += 1
            keys[paper_id] = base + key_suffix(n)
            taken.add(keys[paper_id])
    return keys


def key_suffix(n: int) -> str:
    """'', 'b', 'c', … 'z', 'ba', …: a later paper's key reads as the second, third… of its name."""
    if n == 0:
        return ""
    letters = ""
    while n:
        n, rem = divmod(n, 26)
        letters = chr(ord("a") + rem) + letters
    return letters
