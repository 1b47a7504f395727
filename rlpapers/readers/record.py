"""``Record``: one entry of a bibliography file, with what the format carries beyond a ``Paper``
(the entry's own key, its arXiv id, its type), and the rules shared by the readers."""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from ..errors import ParseWarning
from ..model import Paper

#: Longest title kept; a longer one is cut (with a warning), as a paragraph of the text layout
#: is cut at ``parse.MAX_PARAGRAPH``.
MAX_TITLE = 2_000


@dataclass(frozen=True)
class Record:
    """One entry read from a ``.bib``, ``.ris``, ``.json`` or ``.jsonl`` file.

    Text fields are decoded (LaTeX in BibTeX) and on one line; ``key`` is the file's own
    citation key where it is a safe one (else empty); ``arxiv`` an arXiv id without its
    version; ``kind`` the entry type as the file writes it. Where it came from (``source``,
    ``line``) is kept out of equality, as for ``Paper``."""

    title: str = ""
    abstract: str = ""
    authors: tuple[str, ...] = ()
    authors_truncated: bool = False
    year: int | None = None
    venue: str = ""
    doi: str = ""
    url: str = ""
    arxiv: str = ""
    tags: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    topic: str = ""
    name: str = ""
    note: str = ""
    title_derived: bool = False
    key: str = ""
    kind: str = ""
    source: str = field(default="", compare=False)
    line: int = field(default=0, compare=False)

    def __post_init__(self) -> None:
        if self.abstract and is_placeholder(self.abstract):  # "No abstract available."
            object.__setattr__(self, "abstract", "")

    def identity(self) -> str:
        """What names this paper when it has no abstract to be named by, in this order: its
        DOI, its arXiv id, the file's own key, its normalised title and first author."""
        if self.doi:
            return "doi:" + self.doi.lower()
        if self.arxiv:
            return "arxiv:" + self.arxiv.lower()
        if self.key:
            return "key:" + self.key
        return "title:" + title_identity(self.title, self.authors)

    def paper_id(self) -> str:
        """The content id: made from the abstract where there is one (as for a paper of a
        ``.txt`` file, so the same abstract in both is one paper), else from ``identity``."""
        from ..ids import paper_id

        return paper_id(self.abstract) if self.abstract else paper_id(self.identity())

    def to_paper(self) -> Paper:
        """The record as a ``Paper``. Its ``key`` is the file's own key (or empty): the store
        takes it as the paper's key, as if pinned. A record without a title but with an
        abstract gets a title derived from the abstract, as a text file's paper does."""
        title, name, derived = self.title, self.name, self.title_derived
        if not title and self.abstract:
            from ..parse.titles import derive_title

            name, title = derive_title(self.abstract)
            derived = True
        url = self.url or (f"https://arxiv.org/abs/{self.arxiv}" if self.arxiv else "")
        return Paper(
            id=self.paper_id(),
            abstract=self.abstract,
            key=self.key,
            title=title,
            name=name,
            authors=self.authors,
            authors_truncated=self.authors_truncated,
            categories=self.categories,
            topic=self.topic,
            links=tuple(dict.fromkeys(_links(self.abstract))),
            year=self.year,
            venue=self.venue,
            url=url,
            doi=self.doi,
            tags=self.tags,
            note=self.note,
            title_derived=derived,
            source=self.source,
            line=self.line,
            sources=(f"{self.source}:{self.line}",),
        )


#: What exports write where an entry has no abstract (ACM, IEEE, Scopus, Zotero notes), as
#: lower-case words: such a text names no paper (entries sharing it were one paper).
PLACEHOLDERS = frozenset(
    {
        "",
        "abstract",
        "abstract not available",
        "abstract unavailable",
        "n a",
        "na",
        "no abstract",
        "no abstract available",
        "no abstract provided",
        "none",
        "not applicable",
        "not available",
        "null",
        "tba",
        "tbd",
    }
)


def is_placeholder(abstract: str) -> bool:
    """Whether an entry's abstract is only a stand-in for none (``[No abstract available]``,
    ``N/A``, ``-``): compared as its lower-case words, once it is short enough to be one."""
    if len(abstract) > 40:
        return False
    return " ".join(re.findall(r"[^\W_]+", abstract.lower())) in PLACEHOLDERS


def title_identity(title: str, authors: tuple[str, ...]) -> str:
    """A title and first author in the form two copies of one paper share: accents folded,
    lower case, the words' letters (of any script) and digits only, and the first author's
    surname."""
    from ..text import fold, surname

    words = re.findall(r"[^\W_]+", fold(title))  # letters of any script, and digits
    first = re.findall(r"[^\W_]+", fold(surname(authors[0]))) if authors else []
    return " ".join(words) + "|" + " ".join(first)


def _links(text: str) -> list[str]:
    if "http" not in text:
        return []
    from ..parse.text import URL

    return [url.rstrip(".,;:!?)") for url in URL.findall(text)]


def warn(source: str, line: int, message: str) -> None:
    """A ``ParseWarning`` naming the file and line."""
    where = f"{source}:{line}" if line else source
    warnings.warn(ParseWarning(f"{where}: {message}"), stacklevel=3)


# --- field rules the readers share ----------------------------------------------------------


def one_line(text: object) -> str:
    """A value as one line of text (``None`` is empty); control characters go."""
    from ..text import one_line as line

    return line(str(text)) if text is not None else ""


def bounded(text: str, limit: int, what: str, source: str, line: int) -> str:
    """``text`` cut at ``limit`` characters (at a space where there is one), with a warning."""
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    article = "an" if what[:1].lower() in "aeiou" else "a"
    warn(
        source,
        line,
        f"{article} {what} of {len(text):,} characters; only its first {limit:,} are kept",
    )
    return text[: cut if cut > 0 else limit]


def year_of(value: object, source: str, line: int) -> int | None:
    """The year in ``2025``, ``2025-03-18``, ``2025///`` or ``[[2025, 3]]``; None, with a
    warning, where a value is given but holds no year."""
    from ..metadata import YEARS

    if value is None or value == "" or value == []:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        found: str | None = str(value)
    else:
        match = re.search(r"(?<!\d)(\d{1,4})(?!\d)", str(value))
        found = match.group(1) if match else None
    if found is None or not YEARS[0] <= int(found) <= YEARS[1]:
        warn(source, line, f"year {str(value)[:40]!r} is not a year; left out")
        return None
    return int(found)


_DOI_PREFIX = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.I)


def doi_of(value: object) -> str:
    """A DOI without its resolver prefix (``https://doi.org/``, ``doi:``)."""
    return _DOI_PREFIX.sub("", one_line(value)).strip()


@cache
def _arxiv_pattern() -> re.Pattern[str]:
    ident = r"(\d{4}\.\d{4,5}|[a-z][a-z\-]*(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?"
    return re.compile(rf"(?:arxiv(?:\.org/(?:abs|pdf)/|[:.]\s*|\s+)){ident}", re.I)


_BARE_ARXIV = re.compile(r"^(\d{4}\.\d{4,5}|[a-z][a-z\-]*(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?$", re.I)


def arxiv_of(*values: object, bare: object = None) -> str:
    """The arXiv id in ``bare`` (a field that holds only an id, like BibTeX's ``eprint``), or
    else the first one named in ``values`` (``arXiv:2503.11731``, an arxiv.org link, the DOI
    ``10.48550/arXiv.2503.11731``); without its version."""
    if bare:
        match = _BARE_ARXIV.match(one_line(bare).strip())
        if match:
            return match.group(1)
    for value in values:
        text = one_line(value)
        if "arxiv" in text.lower():
            found = _arxiv_pattern().search(text)
            if found:
                return found.group(1)
    return ""


def keywords_of(value: object) -> tuple[str, ...]:
    """Keywords from a list, or from one string separated by commas or semicolons."""
    items = value if isinstance(value, list) else re.split(r"[,;]", one_line(value))
    return tuple(dict.fromkeys(k for k in (one_line(i).strip() for i in items) if k))


def safe_key(value: object, needs_letter: bool = False) -> str:
    """``value`` if it is a safe citation key (``keys.SAFE_KEY``), else empty. A record
    number (``12``, as EndNote writes RIS ids; ``ref3``, ``ITEM-1``: a label an export numbers
    anew each time) or a link (a Zotero item's CSL-JSON id) is not a key: ``needs_letter``
    refuses those too."""
    from ..keys import SAFE_KEY

    key = one_line(value).strip()
    if not key or not SAFE_KEY.fullmatch(key):
        return ""
    if needs_letter and (not re.search(r"[A-Za-z]", key) or "//" in key or _NUMBERED.match(key)):
        return ""
    return key


#: A record label an export numbers in order: ``ref1``, ``REF_12``, ``item-3``, ``r7``.
_NUMBERED = re.compile(r"(?:ref|rec|record|item|entry|cit|bib|id|no|n|r|b)[-_:.]?\d+$", re.I)


#: The note rlpapers' BibTeX exporter adds, naming the places an abstract (or an entry without
#: one) came from.
_SOURCES_NOTE = re.compile(r"(?:^|\.\s)(?:Abstract|Entry) from .+?:\d+(?:, .+?:\d+)*$")


def own_notes(note: str) -> tuple[str, bool]:
    """A note without the sentences rlpapers' exporters add (the places an abstract came
    from, which an export writes anew; "Title derived from the abstract", which becomes the
    record's ``title_derived``), and whether that sentence was there."""
    from ..exporters import DERIVED_NOTE

    note = _SOURCES_NOTE.sub("", note).strip()
    derived = note == DERIVED_NOTE or note.endswith(". " + DERIVED_NOTE)
    if derived:
        note = note[: -len(DERIVED_NOTE)].rstrip().removesuffix(".").rstrip()
    return note, derived


def person(name: str) -> str:
    """A name as ``First von Last Jr``: written ``Last, First`` (or ``von Last, Jr, First``)
    it is turned round, by bibtexparser's reading of BibTeX names; else kept as written."""
    if "," not in name:
        return name
    from bibtexparser.middlewares.names import parse_single_name_into_parts

    try:
        parts = parse_single_name_into_parts(name, strict=False)
    except Exception:  # a name bibtexparser cannot split stays as written
        return name
    words = [*parts.first, *parts.von, *parts.last, *parts.jr]
    return " ".join(w for w in words if w) or name


def named_by_key_alone(row: dict[str, Any], key: str) -> str:
    """For a parse row of an entry named by its key alone (no abstract, DOI or arXiv id, so
    ``Record.paper_id`` came from the key), its title and first author as two copies of one
    paper share them (``title_identity``); "" for any other row. Two such entries with one key
    but another title or first author are two papers given one key, not copies."""
    from ..ids import paper_id

    if row.get("abstract") or row["id"] != paper_id("key:" + key):
        return ""
    return title_identity(str(row.get("title", "")), tuple(row_authors(row)))


def row_authors(row: dict[str, Any]) -> list[str]:
    """The authors of a parse row (its ``authors`` list, strings only)."""
    authors = row.get("authors")
    return [a for a in authors if isinstance(a, str)] if isinstance(authors, list) else []
