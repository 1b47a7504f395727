"""One paper in a text file and in a bibliography file: which entries join which text papers.

A paper of a ``.txt`` file is named by its abstract; an entry of a ``.bib``, ``.ris``,
``.json`` or ``.jsonl`` file without that abstract is named by its DOI, arXiv id, key or title
(``readers.Record.identity``). When both stand for one paper they are *joined*: one record,
listing both places, under one paper id and key. An entry is joined to a text paper when

- the ledger already gives both the same paper (they were joined before, or the text was
  edited meanwhile and continues that paper: ``grouped``), or
- the entry is new to the ledger, its own key is the text paper's current key and its first
  author is the text paper's (a joined entry whose DOI, and so its content id, was corrected:
  ``Joining._keyed_joins``; an entry by another first author, or whose DOI and real title
  both differ from those metadata gives the text paper, is another paper, and its key is
  refused as any key another paper holds), or
- one of the two is new to the ledger (no id yet, not an edit, not an entry whose key names an
  absent paper) and they share a DOI, an arXiv id, or a real title and first author
  (``match``). A text paper's DOI, URL and real title come from its metadata overrides (its
  parse only derives a title from the abstract); an entry's from its own fields.

Two papers that both have an id already are never joined: one of the two ids would stop
naming a record. The joined paper keeps the id it had (both new: the text paper's content id)
and takes the entry's key (the text paper's key before stays one that finds it), and the
ledger keeps the entry's content id as an alias of it, so the join is remembered when the
caches are cleared, the files are renamed or the entry's title is edited.

Matching is one dict per refresh: every text candidate's identities (``identities``) are put
in a dict once, and each entry looks its own up, so the cost is linear in the corpus. It runs
only when the corpus holds new papers and bibliography files, and metadata gives some text
paper a DOI, URL or title.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..readers.record import arxiv_of, doi_of, row_authors, title_identity

if TYPE_CHECKING:
    from ..key_format import KeyFormat
    from ..metadata import Override
    from .ledger import IdentityLedger
    from .plan import Item

#: The metadata fields that tell a text paper is a bibliography entry's paper.
_JOIN_FIELDS = frozenset({"doi", "url", "title"})


#: The kinds of name two copies of one paper may share (``identities``).
KINDS = frozenset({"doi", "arxiv", "title"})


def identities(
    doi: str,
    url: str,
    title: str,
    derived: bool,
    authors: Iterable[str],
    kinds: Collection[str] = KINDS,
) -> list[str]:
    """The names two copies of one paper share, of the ``kinds`` asked for: its DOI (lower
    case, without a resolver), its arXiv id (from a link or the DOI), and its real title with
    its first author's surname (only a title that was given, never one derived from the
    abstract, and only with a first author)."""
    out = []
    doi = doi_of(doi).lower() if doi else ""
    if doi and "doi" in kinds:
        out.append("doi:" + doi)
    arxiv = arxiv_of(url, doi) if "arxiv" in kinds and (url or doi) else ""
    if arxiv:
        out.append("arxiv:" + arxiv.lower())
    names = tuple(authors)
    if "title" in kinds and title and not derived and names:
        name = title_identity(title, names[:1])
        words, _, first = name.partition("|")
        if words and first:
            out.append("title:" + name)
    return out


def row_identities(row: dict[str, Any], kinds: Collection[str] = KINDS) -> list[str]:
    """``identities`` of a parse row (a bibliography entry as its file gives it)."""

    def text(name: str) -> str:
        value = row.get(name)
        return value if isinstance(value, str) else ""

    derived = row.get("title_derived") is True
    return identities(text("doi"), text("url"), text("title"), derived, row_authors(row), kinds)


def remembered(known: dict[str, str], biblio: Collection[str]) -> dict[str, str]:
    """Entry content id -> paper id, for the entries the ledger gives a paper that a text
    paper of the corpus has too: they were joined before, and stay joined."""
    if not biblio:
        return {}
    texts = {pid for cid, pid in known.items() if cid not in biblio}
    return {cid: pid for cid, pid in known.items() if cid in biblio and pid in texts}


def grouped(ids: dict[str, str], biblio: Collection[str]) -> dict[str, str]:
    """Entry content id -> the text content id it joins, for the papers that one text paper
    and some entries of the corpus share (``ids``: content id -> paper id)."""
    if not biblio:
        return {}
    text_of: dict[str, list[str]] = {}
    for cid, pid in ids.items():
        if cid not in biblio:
            text_of.setdefault(pid, []).append(cid)
    return {
        cid: text_of[pid][0]
        for cid, pid in ids.items()
        if cid in biblio and len(text_of.get(pid, ())) == 1
    }


def match(
    texts: dict[str, list[str]],
    entries: dict[str, list[str]],
    allowed: Callable[[str, str], bool],
) -> dict[str, str]:
    """Entry content id -> text content id, one to one: each entry (in the order given) joins
    the first text paper (in the order given) that shares an identity with it and that
    ``allowed(entry, text)`` accepts; each text paper joins one entry at most."""
    index: dict[str, list[str]] = {}
    for cid, names in texts.items():
        for name in names:
            index.setdefault(name, []).append(cid)
    for holders in index.values():
        holders.reverse()  # last first: ``_untaken`` pops the taken ones off the end
    out: dict[str, str] = {}
    taken: set[str] = set()
    for entry, names in entries.items():
        for name in names:
            found = next((t for t in _untaken(index, name, taken) if allowed(entry, t)), None)
            if found is not None:
                out[entry] = found
                taken.add(found)
                break
    return out


def _untaken(index: dict[str, list[str]], name: str, taken: set[str]) -> Iterator[str]:
    """The text papers of ``index[name]`` (kept last first) not taken yet, in order. Taken
    ones at its front are dropped as they are met, so many entries sharing one name (a volume
    DOI that metadata gives a whole proceedings) cost linear time, not quadratic."""
    texts = index.get(name, [])
    while texts and texts[-1] in taken:
        texts.pop()
    return (t for t in reversed(texts) if t not in taken)


def rejoin(items: list[Item], joined: dict[str, str]) -> dict[str, str]:
    """Make each joined entry's items copies of its text paper's content id; ``joined``."""
    for item in items:
        if item.cid in joined:
            item.cid, item.joined = joined[item.cid], True
    return joined


def rejoined(rows: list[dict[str, Any]], joined: dict[str, str]) -> list[dict[str, Any]]:
    """Parse rows, a joined entry's under its text paper's content id."""
    if not joined:
        return rows
    return [{**row, "id": joined[row["id"]]} if row["id"] in joined else row for row in rows]


class _Rows(Protocol):
    def rows(self, state_path: str) -> list[dict[str, Any]]: ...

    @property
    def key_format(self) -> KeyFormat | None: ...


class Joining:
    """The joining of entries to text papers, as one refresh's ``assign.Identities`` does it
    (a part of that class, kept here)."""

    refresh: _Rows
    items: list[Item]
    _files: dict[str, list[Item]]
    _first: dict[str, Item]
    # new text paper's content id -> the key metadata named it by before it had one (it gets
    # that key before its entry's: the metadata's name then stays one of its keys)
    _early: dict[str, str]
    ledger: IdentityLedger

    def _target(self, target: str, present: set[str]) -> str | None:
        raise NotImplementedError

    def _biblio(self) -> set[str]:
        """The content ids whose every copy is in a bibliography file."""
        from pathlib import PurePath

        from ..readers import format_of

        formats = {f: format_of(PurePath(f).name) is not None for f in self._files}
        if not any(formats.values()):  # text files only: nothing to join
            return set()
        texts = {item.cid for item in self.items if not formats[item.file]}
        return {item.cid for item in self.items if item.cid not in texts}

    def _untexted(self, known: dict[str, str], biblio: set[str]) -> set[str]:
        """Papers the corpus holds only by bibliography entries, whose latest text the ledger
        keeps is in no file of the corpus (a joined text paper edited, or gone)."""
        texts = {pid for cid, pid in known.items() if cid not in biblio}
        only = {pid for cid, pid in known.items() if cid in biblio and pid not in texts}
        if not only:
            return set()
        here = set(known)
        states = self.ledger.states_of(only)
        return {pid for pid, s in states.items() if s.cid is not None and s.cid not in here}

    def _joins(
        self,
        cids: list[str],
        ids: dict[str, str],
        fresh: set[str],
        biblio: set[str],
        overrides: list[Override],
        pinned: Sequence[tuple[str, Override]],
    ) -> dict[str, str]:
        """Entry content id -> the text content id it joins: those that share a paper id, a
        new entry whose own key names a text paper's paper, and those that match
        (``join.match``) where one of the two is ``fresh``; a fresh one takes the other's
        paper id in ``ids``."""
        joined = grouped(ids, biblio)
        if not fresh or not biblio or len(biblio) == len(ids):
            return joined
        texts = self._text_names(cids, ids, biblio, set(joined.values()), overrides, fresh)
        for entry, text in self._keyed_joins(ids, fresh, biblio, joined, pinned, texts).items():
            joined[entry], ids[entry] = text, ids[text]
            texts.pop(text, None)
        if not texts:
            return joined
        shared = {ids[t] for t in joined.values()}
        any_fresh = not fresh.isdisjoint(texts)
        wanted = [
            c for c in cids if c in biblio and ids[c] not in shared and (any_fresh or c in fresh)
        ]
        kinds = {name.partition(":")[0] for names in texts.values() for name in names}
        rows = self._first_rows(wanted)
        entries = {c: row_identities(rows[c], kinds) for c in wanted}
        pairs = match(texts, entries, lambda entry, text: entry in fresh or text in fresh)
        for entry, text in pairs.items():
            if entry in fresh:
                ids[entry] = ids[text]
            else:
                ids[text] = ids[entry]
        return {**joined, **pairs}

    def _keyed_joins(
        self,
        ids: dict[str, str],
        fresh: set[str],
        biblio: set[str],
        joined: dict[str, str],
        pinned: Sequence[tuple[str, Override]],
        texts: dict[str, list[str]],
    ) -> dict[str, str]:
        """New entry content id -> the text content id whose paper has the entry's own key
        as its current key (a joined entry whose DOI or arXiv id, and so its content id, was
        corrected): the key says which paper it is, unless the two disagree (``_agreeing``;
        ``texts``: the text papers' names from their metadata)."""
        owner = {pid: cid for cid, pid in ids.items() if cid not in biblio}
        entries = [(c, str(o.values["key"])) for c, o in pinned if c in fresh and c in biblio]
        if not owner or not entries:
            return {}
        keys = self.ledger.keys_of(list(owner))  # one read, not one per entry
        current = {key.lower(): pid for pid, key in keys.items() if key}
        taken = set(joined.values())
        out: dict[str, str] = {}
        for cid, key in entries:
            text = owner.get(current.get(key.lower(), ""))
            if text is not None and text not in taken and cid not in out:
                out[cid] = text
                taken.add(text)
        return self._agreeing(out, texts)

    def _agreeing(self, pairs: dict[str, str], texts: dict[str, list[str]]) -> dict[str, str]:
        """The (entry, text) pairs whose first authors' surnames agree, or where one of the
        two names none, and that their names leave standing (``_uncontradicted``): an entry by
        another first author is another paper, whatever its key says (its key is then claimed
        as any entry's is, and refused if another paper holds it)."""
        if not pairs:
            return {}
        rows = self._first_rows([*pairs, *pairs.values()])

        def first(cid: str) -> str:
            authors = tuple(row_authors(rows.get(cid, {}))[:1])
            return title_identity("", authors).partition("|")[2]

        def agree(entry: str, text: str) -> bool:
            mine, theirs = first(entry), first(text)
            return not mine or not theirs or mine == theirs

        same = {entry: text for entry, text in pairs.items() if agree(entry, text)}
        return _uncontradicted(same, texts, rows)

    def _text_names(
        self,
        cids: list[str],
        ids: dict[str, str],
        biblio: set[str],
        taken: set[str],
        overrides: list[Override],
        fresh: set[str],
    ) -> dict[str, list[str]]:
        """Text content id -> its ``join.identities``, in corpus order, for the text papers
        not joined yet that metadata gives a DOI, URL or title. Metadata names a new text
        paper by its content id or by the key it is about to get (its base key)."""
        present = set(ids.values())
        owner = {pid: cid for cid, pid in ids.items() if cid not in biblio}
        coming: dict[str, tuple[str, str]] | None = None  # made when a target is no key yet
        values: dict[str, dict[str, Any]] = {}
        for override in overrides:
            if _JOIN_FIELDS.isdisjoint(override.values):
                continue
            pid = self._target(override.target, present)
            if pid is None and self.ledger.resolve(override.target.strip()) is None:
                if coming is None:
                    coming = self._coming([c for c in cids if c in fresh and c not in biblio])
                text, base = coming.get(override.target.strip().lower(), ("", ""))
                if text:
                    pid, self._early[text] = ids[text], base
            cid = owner.get(pid or "")
            if cid is not None and cid not in taken:
                found = {k: v for k, v in override.values.items() if k in _JOIN_FIELDS}
                values.setdefault(cid, {}).update(found)
        if not values:
            return {}
        rows = self._first_rows([cid for cid, found in values.items() if "title" in found])
        out = {}
        for cid in (c for c in cids if c in values):
            found = values[cid]
            authors = row_authors(rows[cid]) if cid in rows else []
            names = identities(
                str(found.get("doi") or ""),
                str(found.get("url") or ""),
                str(found.get("title") or ""),
                False,
                authors,
            )
            if names:
                out[cid] = names
        return out

    def _coming(self, cids: list[str]) -> dict[str, tuple[str, str]]:
        """Base key (lower case) -> the first of these new text papers that is about to get
        it, and the key: by the default rule, or by the configured key format."""
        fmt = self.refresh.key_format
        if fmt is None:
            bases = {cid: self._first[cid].base for cid in cids}
        else:
            from ..keys import first_key
            from .records import stored_paper

            rows = self._first_rows(cids)
            bases = {cid: first_key(stored_paper(rows[cid]), {}, fmt) for cid in cids}
        out: dict[str, tuple[str, str]] = {}
        for cid in cids:
            out.setdefault(bases[cid].lower(), (cid, bases[cid]))
        return out

    def _first_rows(self, cids: list[str]) -> dict[str, dict[str, Any]]:
        """The parse rows of these content ids' first copies, read file by file."""
        wanted: dict[str, set[str]] = {}
        for cid in cids:
            wanted.setdefault(self._first[cid].file, set()).add(cid)
        out: dict[str, dict[str, Any]] = {}
        for file, mine in wanted.items():
            for row in self.refresh.rows(file):
                if row["id"] in mine:
                    out.setdefault(row["id"], row)
        return out


def _uncontradicted(
    pairs: dict[str, str], texts: dict[str, list[str]], rows: dict[str, dict[str, Any]]
) -> dict[str, str]:
    """The keyed (entry, text) pairs that their names leave standing: an entry whose DOI and
    real title both differ from those metadata gives the text paper is another paper (a
    Google Scholar key is shaped like rlpapers' own, so another paper by the same first author
    and year may bring the same key), whatever its key says; one name differing (a corrected
    DOI, a corrected title) is the same paper."""

    def differ(mine: list[str], theirs: list[str], kind: str) -> bool:
        a = {n for n in mine if n.startswith(kind)}
        b = {n for n in theirs if n.startswith(kind)}
        return bool(a) and bool(b) and a.isdisjoint(b)

    out = {}
    for entry, text in pairs.items():
        mine, theirs = row_identities(rows.get(entry, {})), texts.get(text, [])
        if not (differ(mine, theirs, "doi:") and differ(mine, theirs, "title:")):
            out[entry] = text
    return out
