"""Records: the paper, the frozen dataclass every layer passes around, and its JSON schema
(a search's ``Hit`` is in ``hit.py``)."""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import Any

#: Field order of the JSON/YAML/JSONL schema. Scripts read it: add fields only at the end.
SCHEMA_FIELDS = (
    "id",
    "key",
    "title",
    "name",
    "authors",
    "authors_truncated",
    "categories",
    "topic",
    "abstract",
    "source",
    "line",
    "links",
    "sources",
    "year",
    "venue",
    "url",
    "doi",
    "tags",
    "note",
    "title_derived",
)


@dataclass(frozen=True)
class Paper:
    """One paper: an abstract with whatever the file and the metadata overrides say about it."""

    id: str
    abstract: str
    key: str = ""
    title: str = ""
    name: str = ""
    authors: tuple[str, ...] = ()
    authors_truncated: bool = False
    categories: tuple[str, ...] = ()
    topic: str = ""
    links: tuple[str, ...] = ()
    year: int | None = None
    venue: str = ""
    url: str = ""
    doi: str = ""
    tags: tuple[str, ...] = ()
    note: str = ""
    #: True when the title was derived from the abstract, not given by the metadata.
    title_derived: bool = False
    # Where the record came from: kept, but not part of a record's identity.
    source: str = field(default="", compare=False)
    line: int = field(default=0, compare=False)
    sources: tuple[str, ...] = field(default=(), compare=False)

    def with_changes(self, **changes: Any) -> Paper:
        """A copy with some fields changed (like ``dataclasses.replace``, several times faster:
        refreshing a 75k-record index makes one per record)."""
        unknown = set(changes) - _FIELD_SET
        if unknown:
            raise TypeError(f"Paper has no field {sorted(unknown)[0]!r}")
        copy = object.__new__(Paper)
        copy.__dict__.update(self.__dict__)
        copy.__dict__.update(changes)
        return copy

    @property
    def first_link(self) -> str:
        return self.url or (self.links[0] if self.links else "")

    @property
    def keywords(self) -> tuple[str, ...]:
        """Categories, tags and topic, each once, in that order: what exporters call keywords."""
        return tuple(dict.fromkeys(k for k in (*self.categories, *self.tags, self.topic) if k))

    @property
    def author_text(self) -> str:
        """The authors as one readable line, ``et al.`` where the list was cut short."""
        return ", ".join(self.authors) + (" et al." if self.authors_truncated else "")

    def to_dict(self) -> dict[str, Any]:
        """The stable, JSON-ready form (tuples become lists) in SCHEMA_FIELDS order."""
        data = {}
        for name in SCHEMA_FIELDS:
            value = getattr(self, name)
            data[name] = list(value) if isinstance(value, tuple) else value
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Paper:
        """A paper from its ``to_dict`` form: lists become tuples, other keys are ignored.
        ``ValueError`` names the first field that is missing or not of its type, so that a
        damaged record is never taken for a paper."""
        if not isinstance(data, dict):
            raise ValueError("a paper is a mapping of its fields")
        values = dict(_DEFAULTS)
        for name, value in data.items():
            kind = _KINDS.get(name)
            if kind is None:
                continue
            if kind is tuple:
                if type(value) not in (list, tuple) or not all(type(v) is str for v in value):
                    raise ValueError(f"field {name!r} is not a list of strings")
                value = tuple(value)
            elif type(value) is not kind and (value is not None or name not in _OPTIONAL):
                raise ValueError(f"field {name!r} is not of type {kind.__name__}")
            values[name] = value
        if "id" not in data or "abstract" not in data:
            raise ValueError("a paper needs an id and an abstract")
        paper = object.__new__(cls)  # the fields are checked: no need for __init__'s 20 calls
        paper.__dict__.update(values)
        return paper


FIELD_NAMES = tuple(f.name for f in fields(Paper))
_FIELD_SET = frozenset(FIELD_NAMES)
#: Each field's type, read from its annotation (a new kind of annotation fails here, at import).
_KINDS: dict[str, type] = {
    f.name: {"str": str, "bool": bool, "int": int, "int | None": int, "tuple[str, ...]": tuple}[
        str(f.type)
    ]
    for f in fields(Paper)
}
_OPTIONAL = frozenset(f.name for f in fields(Paper) if str(f.type).endswith("| None"))
_DEFAULTS = {f.name: f.default for f in fields(Paper) if f.default is not MISSING}
