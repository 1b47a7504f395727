"""Citation keys: how a paper's first key is derived, and which keys are allowed.

A key is ``surname_word``: the first author's surname in lower-case ASCII with its particles
(``van Gool`` -> ``vangool``), then the paper's name (``TECRL`` -> ``tecrl``). A paper with no
name takes a distinctive word of its title: never a stop word, nor one of ``GENERIC_WORDS``
(words that would fit a thousand papers). The identity ledger gives each paper its key once;
this module only proposes it.
"""

from __future__ import annotations

import re

from .model import Paper
from .text import ascii_word, starts_cjk, surname

#: What a key may look like: BibTeX-safe (no white space, no ``{}(),"#%=\\'~``), at most 100
#: characters, starting with a letter or digit.
SAFE_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-:./+]{0,99}")
SAFE_KEY_TEXT = "letters, digits and _ - : . / + (starting with a letter or digit, at most 100)"

_STOP = {
    "a", "an", "the", "of", "for", "and", "or", "in", "on", "to", "with", "via", "by", "from",
    "towards", "toward", "is", "are", "be", "we", "our", "this", "that", "which", "these", "its",
    "into", "over", "under", "between", "through", "across", "without", "within", "while",
    "their", "it", "as", "at", "than", "then", "both", "each", "all", "any", "such", "not",
}  # fmt: skip

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


def base_key(paper: Paper) -> str:
    """The key a paper would get if no other paper had it."""
    family = ascii_word(surname(paper.authors[0])) if paper.authors else ""
    word = ascii_word(paper.name) or title_word(paper.title) or "paper"
    return f"{family}_{word}" if family else word


def title_word(title: str) -> str:
    """A distinctive word of a title: the first that is not a stop word, a generic word or an
    adverb; failing that, its first two content words run together (never a generic word)."""
    content = []
    for word in re.findall(r"[^\W_]+(?:-[^\W_]+)*", title):
        if starts_cjk(word):
            word = word[:4]  # a CJK run is a whole clause; four characters make a word or two
        plain = ascii_word(word)
        if len(plain) <= 2 or plain in _STOP:
            continue
        content.append(plain)
        if plain not in GENERIC_WORDS and not plain.endswith("ly") and not plain.isdigit():
            return plain
    return "".join(content[:2])[:24] if len(content) >= 2 else ""


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
