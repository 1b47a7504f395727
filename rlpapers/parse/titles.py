"""A readable title for a paper that has none: its name and what the abstract says it is
("QeRL: quantization-enhanced reinforcement learning for LLMs"), else a phrase from its first
clause; at most ``MAX_TITLE`` characters, never cut inside a word."""

from __future__ import annotations

import re

from .cues import cue_matches
from .names import _SPACES, MAX_TITLE, find_name, plain
from .phrases import CLAUSE, DANGLING, clip, describe, noun_phrase


def derive_title(abstract: str) -> tuple[str, str]:
    """(name, title) for an abstract.

    The title is at most MAX_TITLE characters and never ends in "…" or in a cut word: a phrase
    that is too long is cut at a clause boundary (before "that", "which", ",", "by", …).
    """
    doc = plain(abstract)
    found = find_name(doc)
    if found:
        name, start, end = found
        description = describe(doc.text, start, end, name) or _phrase(doc.text, cue_only=True)
        title = f"{name}: {description}" if description else name
    else:
        name, title = "", _phrase(doc.text)
    return name, clip(_SPACES.sub(" ", title).strip(), MAX_TITLE)


_ASIDE = re.compile(r",?\s*to\s+(?:the\s+best\s+of\s+)?our\s+knowledge,?\s*", re.I)


def _phrase(text: str, cue_only: bool = False) -> str:
    """A concise title-like phrase: what the paper says it introduces, else its first clause."""
    if "knowledge" in text.lower():  # what every _ASIDE match holds (scanning for it is slow)
        text = _ASIDE.sub(" ", text)
    for cue in cue_matches(text):
        rest = text[cue.end() : cue.end() + 300]
        rest = re.sub(r"^and\s+\w+\s+", "", rest)
        obj = re.match(r"((?:an?|the)\s+" + CLAUSE + r"{12,}?)(?=[,;]|\.\s|\.$|$)", rest)
        if obj:
            return noun_phrase(obj.group(1))
    if cue_only:
        return ""
    sentence = re.split(r"(?<=[.!?])\s+(?=[A-Z])", text.strip())[0].rstrip(".")
    clause = re.split(r",\s+|;\s+|\s+(?:that|which|where|while|because)\s+", sentence)[0]
    return noun_phrase(clause)


def title_problems(title: str, abstract: str) -> list[str]:
    """What is wrong with a derived ``title`` for ``abstract``, for tests and benchmarks: longer
    than MAX_TITLE, an ellipsis, a last word cut short (not a whole word of the abstract) or
    left dangling ("of", "the")."""
    problems = []
    if len(title) > MAX_TITLE:
        problems.append(f"{len(title)} characters")
    if title.rstrip().endswith(("…", "...")):
        problems.append("ends in an ellipsis")
    words = title.split()
    last = words[-1].strip(".,;:()[]\"'") if words else ""
    text = plain(abstract).text
    if last and not re.search(r"(?<![\w\-])" + re.escape(last) + r"(?![\w])", text, re.I):
        problems.append(f"last word {last!r} is not a whole word of the abstract")
    if last in DANGLING and len(words) > 1:  # lower case only: "Skeleton Less is More" is a name
        problems.append(f"ends in {last!r}")
    return problems
