"""Phrases for a derived title: the description after a name, a noun phrase cut at a clause
boundary, sentence case and clipping to a length (``titles.derive_title`` uses them)."""

from __future__ import annotations

import re

_DESCRIPTION_WORDS = 14
CLAUSE = r"(?:[^,;.]|\.(?=\d))"
STOP = {
    "a", "an", "the", "we", "our", "this", "that", "these", "those", "in", "on", "to", "for",
    "of", "and", "or", "with", "by", "from", "it", "its", "is", "are", "as", "at", "via",
    "new", "novel", "first", "simple", "here", "however", "then", "also", "both", "each",
    "such", "two", "three", "several", "one", "which", "what", "how", "when", "where", "while",
    "specifically", "finally", "moreover", "furthermore", "additionally", "thus",
    "unlike", "instead", "based", "using", "given", "large", "existing", "many", "most",
    "their", "they", "them", "there", "through", "across", "over", "under", "into", "more",
    "recent", "efficient", "effective", "unified", "general", "scalable", "lightweight",
    "comprehensive", "robust", "generalizable", "systematic", "theoretical", "practical",
}  # fmt: skip


def describe(text: str, start: int, end: int, name: str) -> str:
    after = text[end : end + 400]
    before = text[max(0, start - 300) : start]
    expansion = re.match(r"[\s$}]*\(([^()]{8,160})\)", after)
    if expansion and not expansion.group(1)[:1].isdigit():
        return sentence_case(expansion.group(1))
    colon = re.match(r"\s*:\s*([^.;]{8,200}?)(?=,\s+(?:which|that|where)\b|[.;]|$)", after)
    if colon:
        return sentence_case(colon.group(1))
    if before.rstrip().endswith("("):
        expanded = _expansion_before(before.rstrip()[:-1], name)
        if expanded:
            return expanded
    apposition = re.match(
        r"\s*,\s*(?:which\s+is\s+)?((?:an?|the)\s+" + CLAUSE + r"{8,}?)(?=[,;]|\.\s|\.$|$)", after
    )
    if apposition:
        return noun_phrase(apposition.group(1))
    lead = re.search(
        r"(?:propose|introduce|present|develop)s?d?\s+(an?\s+[^,;.]{8,}?)\s*(?:,\s*)?(?:called|dubbed|named|termed)?\s*$",
        before,
        re.I,
    )
    if lead:
        return noun_phrase(lead.group(1))
    return ""


def _expansion_before(before: str, acronym: str) -> str:
    """``trajectory entropy-constrained reinforcement learning`` before ``(TECRL)``.

    The phrase is the shortest run of words ending the text that starts with the acronym's first
    letter and has about as many word parts (hyphen pieces count) as the acronym has letters.
    """
    letters = [c.lower() for c in acronym if c.isalpha()]
    tail = before.split()
    best = ""
    for size in range(1, min(len(tail), 12) + 1):
        phrase = " ".join(tail[-size:])
        if re.search(r"[.;:!?,()]", phrase):
            break
        pieces = [p for p in re.split(r"[\s\-–]+", phrase) if p]
        if letters and pieces[0][:1].lower() == letters[0]:
            best = phrase
            if len(pieces) >= len(letters) - 1:
                break
    return sentence_case(best) if best else ""


_FILLER = re.compile(
    r"^(?:(?:an?|the|our)\s+)?(?:(?:novel|new|simple|general|first|unified|principled|"
    r"generic|general-purpose|end-to-end)\s+)*",
    re.I,
)


def noun_phrase(text: str) -> str:
    text = _FILLER.sub("", text.strip())
    words = text.split()
    if len(words) > _DESCRIPTION_WORDS:
        words = cut_at_clause(words, _DESCRIPTION_WORDS)
    return sentence_case(" ".join(without_dangling(words)))


# Words a long phrase is cut before: relative and adverbial clauses, prepositional tails, and
# participles that start a modifier ("…method built on …", "…framework trained with …").
_STRONG_BOUNDARY = {"that", "which", "where", "whose", "while", "whereby", "thereby", "wherein"}
_WEAK_BOUNDARY = {
    "by", "to", "for", "with", "using", "via", "through", "in", "on", "and", "from", "across",
    "under", "over", "into", "built", "based", "without", "as", "at", "of",
}  # fmt: skip
DANGLING = STOP | {
    "of", "as", "at", "than", "between", "among", "within", "without", "has", "have", "had",
    "was", "were", "be", "been", "being", "can", "could", "may", "might", "will", "would",
    "should", "must", "not", "do", "does", "did", "called", "named", "termed", "dubbed",
}  # fmt: skip
_ADJECTIVE_END = re.compile(r"(?:able|ible|ous|ful|less|ical)$")


def cut_at_clause(words: list[str], most: int, least: int = 2) -> list[str]:
    """The first ``n`` words (``least <= n <= most``) ending before a clause boundary: a comma,
    a relative pronoun ("that", "which"), a preposition or a participle. The strongest boundary
    wins, the earliest among equals (a preposition or participle needs four words before it);
    with no boundary, the first ``most`` words. Never cuts inside a word, never adds "…"."""
    best: tuple[int, int] | None = None  # (strength, n)
    for n in range(least, min(most, len(words) - 1) + 1):
        strength = _boundary(words, n)
        if strength < 3 and n < 4:
            continue  # "Approach that shifts | from …": a weaker boundary needs four words
        if strength and (best is None or strength > best[0]):
            best = (strength, n)
            if strength == 3:
                break
    return words[: best[1]] if best else words[:most]


def _boundary(words: list[str], n: int) -> int:
    """How good a place to end the phrase the gap before ``words[n]`` is (0: not one)."""
    before, after = words[n - 1], words[n].lower().strip("(")
    if before.lower().strip(",;:") in DANGLING:
        return 0
    if before.endswith((",", ";", ":")) or after in _STRONG_BOUNDARY:
        return 3
    if after in _WEAK_BOUNDARY or (after.isalpha() and after.endswith(("ing", "ed"))):
        return 2 if not before.lower().endswith(("ed", "ing")) else 1
    return 0


def without_dangling(words: list[str]) -> list[str]:
    """``words`` without a tail that cannot end a title: "of", "the", a lone adjective
    ("the discovery of interpretable"); nothing when nothing else is left."""
    while words:
        last = words[-1].rstrip(",;:~").lower()
        unclosed = (
            last.count("(") > last.count(")")
            or last.count("$") % 2
            or last.endswith(("{", "/", "`", "\\"))
            or not any(c.isalnum() for c in last)
        )
        if unclosed or last in DANGLING or (last.isalpha() and _ADJECTIVE_END.search(last)):
            words = words[:-1]
        else:
            break
    return words


def sentence_case(text: str) -> str:
    text = re.sub(r"\*+", "", text).strip(" ,;:.")
    return text[:1].upper() + text[1:]


def clip(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` characters, else cut at the last clause boundary that
    fits (whole words only, no "…")."""
    if len(text) <= limit:
        return text
    words = text[: limit + 1].split()[:-1]  # whole words that fit
    return " ".join(without_dangling(cut_at_clause(words, len(words), 1))).rstrip(" ,;:")
