"""Files planted in the index folder never run code: the view's files hold JSON, struct-packed
numbers and arrays (``index.plainfiles``, ``index.postings``), and every pickle reader Whoosh
holds refuses. A pickle wherever Whoosh used to keep one is damage, and the view heals."""

from __future__ import annotations

import ast
import io
import json
import os
import pickle
import re
import struct
import subprocess
import sys
import textwrap
import warnings
import zlib
from pathlib import Path

import pytest

from rlpapers import Library
from rlpapers.errors import IndexNotice

from .conftest import ROOT, run


def touch_marker(path: str) -> None:
    """What a planted pickle calls: proof that code from a file ran."""
    Path(path).touch()


class _Evil:
    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):  # what a planted pickle does: call anything on load
        return (touch_marker, (self.marker,))


def _evil(marker: Path) -> bytes:
    return pickle.dumps(_Evil(marker), 2)


def whoosh_toc(version: int, schema: bytes, segments: bytes, generation: int = 1) -> bytes:
    """A table of contents in Whoosh's own layout (what a view of an older rlpapers holds):
    sizes, a check number, the format ``version``, the release, the schema's pickle (Whoosh's
    legacy -110 layout: a varint length and the pickle), the generation and the segments'
    pickle."""
    from whoosh.filedb.structfile import StructFile

    buffer = io.BytesIO()
    out = StructFile(buffer)
    for size in (4, 8, 4):
        out.write_varint(size)
    out.write_int(-12345)
    out.write_int(version)
    for number in (2, 7, 5):
        out.write_varint(number)
    if version == -110:
        out.write_varint(len(schema))
        out.write(schema)
    else:
        out.write_string(schema)
    out.write_int(generation)
    out.write_int(0)
    out.write(segments)
    return buffer.getvalue()


def _toc(folder: Path) -> Path:
    (toc,) = sorted(folder.rglob("_MAIN_*.toc"))
    return toc


def _planted_and_searched(corpus: Path, toc: Path, payload: bytes, marker: Path) -> None:
    toc.write_bytes(payload)
    result = run("--corpus", corpus, "search", "entropy", "-f", "ids")
    assert not marker.exists(), "a planted file ran code"
    assert result.stdout and "rebuilding" in result.stderr  # refused, so treated as damage
    assert run("--corpus", corpus, "search", "entropy", "-f", "ids").stderr == ""
    json.loads(_toc(toc.parents[1]).read_bytes())  # healed: a table of contents of JSON


@pytest.mark.parametrize(
    "layout",
    ["whole file", "whoosh schema", "whoosh segments", "whoosh legacy -110"],
)
def test_a_planted_table_of_contents_runs_no_code(layout, seeds_copy, isolated, tmp_path):
    assert run("--corpus", seeds_copy, "search", "entropy", "-f", "ids").stdout
    marker = tmp_path / "pwned"
    evil, empty = _evil(marker), pickle.dumps([], 2)
    payload = {
        "whole file": evil,
        "whoosh schema": whoosh_toc(-111, evil, empty),
        "whoosh segments": whoosh_toc(-111, empty, evil),
        "whoosh legacy -110": whoosh_toc(-110, evil, empty),
    }[layout]
    _planted_and_searched(seeds_copy, _toc(isolated / "index"), payload, marker)


def test_the_planted_pickle_would_run_under_a_plain_unpickler(tmp_path):
    """The tests here are able to fail: the same bytes run code when read without the guard."""
    marker = tmp_path / "pwned"
    pickle.loads(_evil(marker))
    assert marker.exists()


def test_a_script_that_imported_whoosh_first_reads_no_pickle(seeds_copy, isolated, tmp_path):
    """Modules imported before rlpapers bind pickle's plain readers by name
    (``whoosh.filedb.structfile.load_pickle``, ``whoosh.columns.loads``, ...): they are
    replaced too, so a script or notebook that imported Whoosh first reads no planted file."""
    assert run("--corpus", seeds_copy, "search", "entropy", "-f", "ids").stdout
    marker = tmp_path / "pwned"
    _toc(isolated / "index").write_bytes(whoosh_toc(-111, _evil(marker), _evil(marker)))
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        import whoosh.columns, whoosh.codec.whoosh3, whoosh.filedb.structfile  # Whoosh first
        from rlpapers import Library
        with Library([{str(seeds_copy)!r}]) as lib:
            assert lib.search("entropy")
        from whoosh import columns
        from whoosh.codec import whoosh3
        from whoosh.filedb import structfile
        for reader in (columns.loads, whoosh3.loads, structfile.load_pickle):
            try:
                reader(b"")
            except ValueError as error:
                assert "never reads" in str(error)
            else:
                raise SystemExit("a plain pickle reader is left")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=os.environ, capture_output=True, timeout=300
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert not marker.exists(), "a planted table of contents ran code in a script"


def _segments(index: Path) -> list[Path]:
    found = sorted(index.rglob("*.seg"))
    assert found
    return found


def test_a_pickle_planted_as_every_block_of_postings_runs_no_code(seeds_copy, tmp_path):
    """Each block's data replaced with a compressed pickle of the same length class (Whoosh
    unpickled a block's data): refused, the view is rebuilt, and the search answers as before."""
    from rlpapers.index.postings import _HEADER

    index_dir = tmp_path / "ix"
    expected = [h.paper.id for h in Library([seeds_copy], index_dir=index_dir).search("policy")]
    marker = tmp_path / "pwned"
    evil = zlib.compress(_evil(marker), 3)
    planted = 0
    for segment in _segments(index_dir):
        data = segment.read_bytes()
        out = bytearray(data)
        for found in re.finditer(rb"W3Bl", data):  # the first block of a term's postings
            at = found.end()
            (size,) = struct.unpack(">i", data[at : at + 4])
            start = at + 4 + _HEADER.size
            end = at + 4 + abs(size)
            if end - start >= len(evil):
                out[start:end] = evil + bytes(end - start - len(evil))
                planted += 1
        segment.write_bytes(bytes(out))
    assert planted > 10
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        found = [h.paper.id for h in Library([seeds_copy], index_dir=index_dir).search("policy")]
    assert not marker.exists()
    assert found == expected
    assert any(issubclass(w.category, IndexNotice) for w in seen)


def test_a_pickle_planted_as_a_compound_directory_runs_no_code(seeds_copy, tmp_path):
    """A compound segment ends with its directory (Whoosh pickled it): a pickle there is
    refused, and the view is rebuilt."""
    index_dir = tmp_path / "ix"
    expected = [h.paper.id for h in Library([seeds_copy], index_dir=index_dir).search("policy")]
    marker = tmp_path / "pwned"
    for segment in _segments(index_dir):
        data = bytearray(segment.read_bytes())
        (where,) = struct.unpack(">q", data[:8])  # the directory's offset
        evil = _evil(marker)
        data[where:] = bytes([len(evil)]) + evil  # a varint length, as the directory's is
        segment.write_bytes(bytes(data))
    with pytest.warns(IndexNotice):
        found = [h.paper.id for h in Library([seeds_copy], index_dir=index_dir).search("policy")]
    assert not marker.exists()
    assert found == expected


def test_views_built_in_parallel_updated_and_reopened_read_no_pickle(seeds_copy, tmp_path):
    """A view built by the parallel writer (its job files), then updated (documents deleted
    and added: several segments), reopens and answers with no rebuild notice: nothing any
    path reads is a pickle. Every table of contents is JSON."""
    script = textwrap.dedent(
        f"""
        import sys, warnings
        sys.path.insert(0, {str(ROOT)!r})
        import rlpapers.index.view as view
        from rlpapers import Library
        from rlpapers.errors import IndexNotice
        view.PARALLEL_FROM = 1  # the parallel writer, as for 5,000 papers and more
        corpus = {str(seeds_copy)!r}
        with Library([corpus]) as lib:
            assert lib.search("entropy")
        first = sorted(__import__("pathlib").Path(corpus).glob("*.txt"))[0]
        text = first.read_text(encoding="utf-8")
        first.write_text(text.replace("entropy", "entropic", 1), encoding="utf-8")
        warnings.simplefilter("error", IndexNotice)
        with Library([corpus]) as lib:
            assert lib.search("entropy") and lib.search("author:Bengio")
            assert lib.search('abstract:"policy gradient"')
        with Library([corpus]) as lib:
            assert lib.search("entropic")
        """
    )
    env = dict(os.environ, RLPAPERS_INDEX_DIR=str(tmp_path / "ix"))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    tocs = sorted((tmp_path / "ix").rglob("_MAIN_*.toc"))
    assert tocs
    for toc in tocs:
        assert json.loads(toc.read_bytes())["format"] == "rlpapers-toc-1"


def test_another_whoosh_index_beside_rlpapers_is_a_clear_error_never_a_hang(tmp_path):
    """A script's own Whoosh index, after rlpapers is imported: its schema is not kept (it would
    be a pickle), so it is opened with the schema given. Whoosh's parallel writer opens it
    without one in each worker: the worker stopped and the writer waited for it for ever. It
    is now refused at once, and one process writes it."""
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        import rlpapers.index  # noqa: F401
        from whoosh import index
        from whoosh.fields import TEXT, Schema
        schema = Schema(text=TEXT(stored=True))
        ix = index.create_in({str(tmp_path)!r}, schema)
        try:
            ix.writer(procs=2, multisegment=True)
        except ValueError as error:
            assert "parallel writer" in str(error)
        else:
            raise SystemExit("a parallel writer that would wait for ever")
        with ix.writer() as writer:
            for n in range(250):
                writer.add_document(text=f"paper number {{n}} about policy gradients")
        with index.open_dir({str(tmp_path)!r}, schema=schema).searcher() as searcher:
            assert searcher.doc_count() == 250
            assert searcher.stored_fields(7)["text"] == "paper number 7 about policy gradients"
        try:
            index.open_dir({str(tmp_path)!r})
        except ValueError as error:
            assert "schema given" in str(error)
        else:
            raise SystemExit("another index opened with the view's schema")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()[-2000:]


def test_no_module_of_rlpapers_imports_pickle():
    """The promise rests on no reader of pickles in rlpapers' own code either."""
    for path in sorted((ROOT / "rlpapers").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            assert not any(n.split(".")[0] in ("pickle", "_pickle", "dill") for n in names), path
