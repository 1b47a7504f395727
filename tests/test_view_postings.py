"""The view's compact positions (``rlpapers.index.postings``): the same positions in less space,
phrase queries on every field that keeps them, and a view written the old way rebuilt."""

from __future__ import annotations

import json
import random
import warnings
from pathlib import Path

import pytest
from whoosh.filedb.filestore import FileStorage
from whoosh.formats import Positions
from whoosh.query import Phrase

from rlpapers import Library
from rlpapers.errors import IndexNotice
from rlpapers.index import view as view_module
from rlpapers.index.postings import CompactCodec, CompactPositions
from rlpapers.index.schema import document, schema
from rlpapers.model import Paper

from .conftest import SEEDS


@pytest.mark.parametrize(
    "positions",
    [[0], [255], [256], [3, 7, 300], [0, 1, 2], [5, 70_000], [1, 65_536 + 1, 65_536 * 3]],
)
def test_positions_come_back_as_they_were_stored(positions):
    form = CompactPositions()
    value = form.encode(positions)
    assert form.decode_positions(value) == positions
    assert form.decode_frequency(value) == len(positions)
    assert form.decode_weight(value) == len(positions)


def test_random_positions_come_back_and_take_less_than_whooshs():
    rng = random.Random(7)
    form, whoosh = CompactPositions(), Positions()
    for _ in range(500):
        positions = sorted(rng.sample(range(rng.choice([50, 400, 100_000])), rng.randint(1, 30)))
        assert form.decode_positions(form.encode(positions)) == positions
        assert len(form.encode(positions)) < len(whoosh.encode(positions))


_WORDS = {
    "name": "Alpha Zeta",
    "title": "alpha zeta routing",
    "abstract": "We study alpha zeta routing for agents.",
    "author": "Ada Lovelace",
    "category": "cs.LG",
    "topic": "Offline reinforcement",
    "venue": "Neural Systems",
    "note": "read alpha zeta first",
}


def _paper(pid: str, reverse: bool) -> Paper:
    def words(field: str) -> str:
        text = _WORDS[field]
        return " ".join(reversed(text.split())) if reverse else text

    return Paper(
        id=pid,
        key=pid,
        abstract=words("abstract"),
        title=words("title"),
        name=words("name"),
        authors=(words("author"),),
        categories=(_WORDS["category"] if not reverse else "LG.cs",),
        topic=words("topic"),
        venue=words("venue"),
        note=words("note"),
    )


def _phrase_fields() -> list[str]:
    fields = schema()
    return [name for name in fields.names() if fields[name].format.supports("positions")]


def _found(ix, field: str) -> list[str]:
    words = [t.text for t in ix.schema[field].analyzer(_WORDS[field])]
    assert len(words) >= 2, field
    with ix.searcher() as searcher:
        return [hit["id"] for hit in searcher.search(Phrase(field, words[:2]), limit=None)]


def test_a_phrase_finds_its_words_in_order_in_every_field_that_keeps_positions(tmp_path):
    fields = _phrase_fields()
    assert set(fields) == set(_WORDS)  # every field that accepts phrases, and no other
    ix = FileStorage(str(tmp_path)).create_index(schema())
    writer = view_module._writer(ix)
    for n in range(300):  # enough documents for blocks of postings, not only inlined ones
        writer.add_document(**document(_paper(f"p{n:03d}", reverse=n % 2 == 1)))
    writer.commit()
    expected = [f"p{n:03d}" for n in range(0, 300, 2)]
    for field in fields:
        assert sorted(_found(ix, field)) == expected, field
    view_module._apply(ix, [_paper("p001", reverse=False)], ["p000"])  # an update, merged
    for field in fields:
        assert sorted(_found(ix, field)) == ["p001", *expected[1:]], field
    ix = FileStorage(str(tmp_path)).open_index()
    for segment in ix._segments():
        assert isinstance(segment.codec(), CompactCodec)


def test_phrase_queries_through_the_library(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text(
        "cs.LG\n\nAda Lovelace, Alan Turing\n\nWe propose ZetaNet, a policy gradient method "
        "for offline agents.\n\ncs.AI\n\nTuring Alan, Lovelace Ada\n\nA gradient policy "
        "study of online agents.\n",
        encoding="utf-8",
    )
    library = Library([corpus], tmp_path / "index")
    assert [h.paper.name for h in library.search('abstract:"policy gradient"')] == ["ZetaNet"]
    assert [h.paper.name for h in library.search('author:"ada lovelace"')] == ["ZetaNet"]
    assert len(library.search("gradient policy", limit=None)) == 2


def _generation(index: Path) -> Path:
    folder = Library([SEEDS], index).settings.index_dir / "view"
    return folder / (folder / "CURRENT").read_text().strip()


def _whoosh_schema():
    """The schema as it was before compact positions: Whoosh's own format."""
    fields = schema()
    for name in fields.names():
        if isinstance(fields[name].format, CompactPositions):
            fields[name].format = Positions(field_boost=fields[name].format.field_boost)
    return fields


def test_a_view_written_with_whooshs_positions_is_rebuilt_by_itself(tmp_path, monkeypatch):
    index = tmp_path / "index"
    with monkeypatch.context() as old:
        old.setattr(view_module, "schema", _whoosh_schema)
        old.setattr(view_module, "_writer", lambda ix, **options: ix.writer(**options))
        old.setattr(view_module, "SCHEMA_VERSION", view_module.SCHEMA_VERSION - 1)
        assert Library([SEEDS], index).search("entropy")
        stale = _generation(index)
        manifest = json.loads((stale / "manifest.json").read_text(encoding="utf-8"))
        assert manifest["schema"] == view_module.SCHEMA_VERSION  # the older version
    with pytest.warns(IndexNotice, match="another version"):
        hits = Library([SEEDS], index).search('abstract:"policy optimization"')
    assert hits
    fresh = _generation(index)
    assert fresh != stale and not stale.exists()
    assert json.loads((fresh / "manifest.json").read_text())["schema"] == (
        view_module.SCHEMA_VERSION
    )
    ix = view_module.open_whoosh(fresh)
    assert type(ix.schema["abstract"].format) is CompactPositions
    assert all(isinstance(s.codec(), CompactCodec) for s in ix._segments())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the rebuilt view is used as it is
        assert Library([SEEDS], index).search('abstract:"policy optimization"') == hits


def _postings(ix) -> dict:
    """Every posting of every field: (field, term) -> [(doc, weight, value)]."""
    found = {}
    with ix.reader() as reader:
        for field, term in reader.all_terms():
            matcher = reader.postings(field, term)
            found[field, term] = [(i, w, v) for i, w, v in _triples(matcher)]
    return found


def _triples(matcher):
    while matcher.is_active():
        yield matcher.id(), matcher.weight(), matcher.value()
        matcher.next()


def test_postings_spilled_to_run_files_come_back_the_same(tmp_path):
    papers = [_paper(f"p{n:03d}", reverse=n % 3 == 0) for n in range(200)]
    built = {}
    for name, limit in (("memory", None), ("spilled", 4000)):
        (tmp_path / name).mkdir()
        ix = FileStorage(str(tmp_path / name)).create_index(schema())
        writer = view_module._writer(ix)
        if limit:
            writer.pool.limit = limit  # bytes: a run file every few documents
        for paper in papers:
            writer.add_document(**document(paper))
        if limit:
            assert len(writer.pool.runs) > 5
        writer.commit()
        built[name] = _postings(FileStorage(str(tmp_path / name)).open_index())
    assert built["spilled"] == built["memory"]
    assert len(built["memory"]) > 20
