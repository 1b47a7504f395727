"""Clean text to blocks: paragraphs separated by blank lines, wrapped lines joined."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
_SPACES = re.compile(r"\s+")
# A line that ends inside a word: "pret-" (letters, then one hyphen).
_BROKEN = re.compile(r"([^\W\d_]+)-$")
_CONTINUES = re.compile(r"^([^\W\d_]+)")


@dataclass(frozen=True)
class Block:
    """A paragraph of the input: its first line number (1-based) and its lines, stripped."""

    line: int
    lines: tuple[str, ...]

    @property
    def raw(self) -> str:
        return "\n".join(self.lines)


def split_blocks(text: str) -> list[Block]:
    """Split on lines that are empty or whitespace only; strip each line."""
    blocks: list[Block] = []
    current: list[str] = []
    start = 0
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip()
        if not stripped:
            if current:
                blocks.append(Block(start, tuple(current)))
                current = []
            continue
        if not current:
            start = number
        current.append(stripped)
    if current:
        blocks.append(Block(start, tuple(current)))
    return blocks


def vocabulary(text: str) -> set[str]:
    """Lower-cased words and hyphenated compounds written whole on one line of ``text``."""
    words: set[str] = set()
    for line in text.split("\n"):
        body = line.rstrip()
        if body.endswith("-"):
            body = body[: body.rfind(" ") + 1] if " " in body else ""
        words.update(match.group(0).lower() for match in _WORD.finditer(body))
    return words


def join_lines(lines: Iterable[str], vocab: set[str] | frozenset[str] = frozenset()) -> str:
    """Join wrapped lines with spaces, mending words broken by a hyphen at a line end.

    ``pret-`` + ``rained`` becomes ``pretrained`` when the vocabulary knows the joined word and
    not the hyphenated one; ``off-`` + ``policy`` keeps its hyphen (``off-policy`` is known, or
    neither form is, and keeping the hyphen loses nothing).
    """
    out = ""
    for line in lines:
        line = line.strip()
        if not out:
            out = line
            continue
        broken = _BROKEN.search(out)
        cont = _CONTINUES.match(line)
        if broken and cont and _should_mend(broken.group(1), cont.group(1), vocab):
            out = out[:-1] + line
        elif broken and cont:
            out = out + line
        else:
            out = out + " " + line
    return _SPACES.sub(" ", out).strip()


def _should_mend(left: str, right: str, vocab: set[str] | frozenset[str]) -> bool:
    if not right[0].islower():
        return False
    joined = (left + right).lower()
    hyphenated = f"{left}-{right}".lower()
    return joined in vocab and hyphenated not in vocab
