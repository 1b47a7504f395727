"""The Whoosh schema, its version, and how a Paper becomes a document.

The index holds only what search needs: analysed text fields and the paper id. Records live in
the record store; a search returns ids, and the store gives the records.
"""

from __future__ import annotations

from typing import Any

from whoosh.fields import ID, KEYWORD, NUMERIC, TEXT, Schema
from whoosh.formats import Positions

from ..model import Paper
from .analysis import name_analyzer, text_analyzer
from .postings import CompactPositions

#: Bump when the schema, the analysis or the document layout changes: old indexes are rebuilt.
#: 11: positions stored compactly (``postings``). 12: no pickle in any file (``plainfiles``).
#: 13: a check of each block header of postings (``postings._HEADER``).
SCHEMA_VERSION = 13

#: Field weights for BM25 (``ranking``). A title's and a name's words take the abstract's idf
#: (``ranking.SHARED_IDF``), so a title match counts less than an abstract match (0.75: a
#: title's words are most often in the abstract too, and each field adds its own score; chosen
#: on the odd Cranfield and CISI queries, docs/search-quality.md); a name (a few words picked
#: from the title or abstract) counts half.
BOOSTS = {"name": 0.5, "title": 0.75, "abstract": 1.0, "author": 2.0, "category": 1.5, "topic": 1.0}


def schema() -> Schema:
    """The view's fields. Every field that keeps positions accepts phrase queries and keeps
    them in ``postings.CompactPositions``."""
    text = text_analyzer()
    names = name_analyzer()
    fields = dict(
        id=ID(stored=True, unique=True),
        key=KEYWORD(lowercase=True),
        name=TEXT(analyzer=text, multitoken_query="phrase"),
        title=TEXT(analyzer=text, multitoken_query="phrase"),
        abstract=TEXT(analyzer=text, multitoken_query="phrase"),
        author=TEXT(analyzer=names, multitoken_query="phrase"),
        category=TEXT(analyzer=names, multitoken_query="phrase"),
        topic=TEXT(analyzer=names, multitoken_query="phrase"),
        source=TEXT(analyzer=names, phrase=False, multitoken_query="and"),
        year=NUMERIC(int, bits=16, signed=False),
        venue=TEXT(analyzer=names, multitoken_query="phrase"),
        tag=KEYWORD(lowercase=True, commas=True),
        doi=KEYWORD(lowercase=True),
        note=TEXT(analyzer=text, multitoken_query="phrase"),
    )
    for field in fields.values():
        if type(field.format) is Positions:
            field.format = CompactPositions(field_boost=field.format.field_boost)
    return Schema(**fields)


def document(paper: Paper) -> dict[str, Any]:
    return {
        "id": paper.id,
        "key": paper.key,
        "name": paper.name,
        "title": paper.title,
        "abstract": paper.abstract,
        "author": "\n".join(paper.authors),
        "category": "\n".join(paper.categories),
        "topic": paper.topic,
        "source": " ".join(s.rsplit(":", 1)[0] for s in paper.sources or (paper.source,)),
    } | _metadata_fields(paper)


def _metadata_fields(paper: Paper) -> dict[str, Any]:
    """What the metadata overrides say, for ``year:2024``, ``venue:neurips``, ``tag:toread``;
    only the fields a paper has (Whoosh refuses an empty numeric value)."""
    fields = {
        "year": paper.year,
        "venue": paper.venue,
        "tag": ",".join(t.replace(",", " ") for t in paper.tags),
        "doi": paper.doi,
        "note": paper.note,
    }
    return {name: value for name, value in fields.items() if value}
