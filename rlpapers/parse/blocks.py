"""Clean text to blocks: paragraphs separated by blank lines (or one a line, when each line is a
long paragraph of its own), wrapped lines joined."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
# A line that ends inside a word: "pret-" (letters, then one hyphen).
_BROKEN = re.compile(r"([^\W\d_]+)-$")
_CONTINUES = re.compile(r"^([^\W\d_]+)")
#: After a hyphen at a line end, these words mean the hyphen is suspended ("semantic- and
#: syntactic-level"): hyphen and space are kept.
_SUSPENDING = frozenset({"and", "or", "nor", "to"})


@dataclass(frozen=True)
class Block:
    """A paragraph of the input: its first line number (1-based) and its lines, stripped."""

    line: int
    lines: tuple[str, ...]

    @property
    def raw(self) -> str:
        return "\n".join(self.lines)


def split_blocks(text: str) -> list[Block]:
    """Split on lines that are empty or whitespace only; strip each line. A block whose lines
    are each a long paragraph ending a sentence is one block a line (``_own_paragraphs``)."""
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
    return [part for block in blocks for part in _own_paragraphs(block)]


#: A block whose lines are paragraphs of their own, as a file keeping one abstract a line with no
#: blank line between them writes them: at least ``_PARAGRAPH_MEAN`` bytes of UTF-8 a line on
#: average and ``_PARAGRAPH_LEAST`` at the least, each ending a sentence. Wrapped text has short
#: lines that rarely end a sentence, and a file keeping one sentence a line (as some LaTeX
#: sources do) lines of 100-250 characters. Bytes, not characters: a CJK abstract is as long.
_PARAGRAPH_MEAN = 600
_PARAGRAPH_LEAST = 100
_ENDS_SENTENCE = re.compile(r"[.!?。！？]$")


def _own_paragraphs(block: Block) -> list[Block]:
    """``block`` as one block per line where each line is a paragraph (above), else itself."""
    lines = block.lines
    if len(lines) < 2 or len(lines[0]) < _PARAGRAPH_LEAST:  # the usual block, decided at once
        return [block]
    sizes = [len(line.encode("utf-8")) for line in lines]
    if min(sizes) < _PARAGRAPH_LEAST or sum(sizes) < _PARAGRAPH_MEAN * len(lines):
        return [block]
    if not all(_ENDS_SENTENCE.search(line) for line in lines):
        return [block]
    return [Block(block.line + n, (line,)) for n, line in enumerate(lines)]


_BROKEN_WORD = re.compile(r"[^\W\d_]-[ \t]*\n")


def mending_vocabulary(text: str) -> set[str]:
    """The words that mend a word broken at a line end (``rein-\\nforcement``): ``text``'s
    vocabulary when it has such a break, else nothing."""
    return vocabulary(text) if _BROKEN_WORD.search(text) else set()


def vocabulary(text: str) -> set[str]:
    """Lower-cased words and hyphenated compounds of ``text`` (the pieces of a word broken at a
    line end come in too, which is harmless: only whole joined words are looked up)."""
    lowered = text.lower()
    words: set[str] = set()
    start = 0
    while start < len(lowered):  # a slice of lines at a time: no list of every word of the file
        end = lowered.find("\n", start + 65_536)
        end = len(lowered) if end < 0 else end
        # each distinct run of non-spaces once (no word spans a space); a run that is already a
        # word gives only itself
        for token in set(lowered[start:end].split()):
            if token in words:
                continue
            if token.isalpha():  # letters only: the token is one word
                words.add(token)
            else:
                words.update(_WORD.findall(token))
        start = end + 1
    return words


def join_lines(lines: Iterable[str], vocab: set[str] | frozenset[str] = frozenset()) -> str:
    """Join wrapped lines with spaces, mending words broken by a hyphen at a line end.

    ``pret-`` + ``rained`` becomes ``pretrained`` when the vocabulary knows the joined word and
    not the hyphenated one; ``off-`` + ``policy`` keeps its hyphen (``off-policy`` is known, or
    neither form is, and keeping the hyphen loses nothing); ``semantic-`` + ``and …`` is a
    suspended hyphen and keeps its space (``semantic- and syntactic-level``).
    """
    parts: list[str] = []
    previous = ""
    for line in lines:
        line = line.strip()
        if not line:
            continue
        if parts:
            broken = _BROKEN.search(previous) if previous.endswith("-") else None
            cont = _CONTINUES.match(line) if broken else None
            mend = broken and cont and _should_mend(broken.group(1), cont.group(1), vocab)
            if not mend and cont and cont.group(1).lower() in _SUSPENDING:
                cont = None  # a suspended hyphen: joined with a space, as any line
            if mend:
                parts[-1] = parts[-1][:-1]  # drop the hyphen, glue the word
            elif not (broken and cont):
                parts.append(" ")
        parts.append(line)
        previous = line
    return " ".join("".join(parts).split())  # whitespace collapsed (as by re's \s+)


def _should_mend(left: str, right: str, vocab: set[str] | frozenset[str]) -> bool:
    if not right[0].islower():
        return False
    joined = (left + right).lower()
    hyphenated = f"{left}-{right}".lower()
    return joined in vocab and hyphenated not in vocab
