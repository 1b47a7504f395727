"""Damage to the search view's files (a flipped byte, a garbled part of a compound segment)
heals: the view is rebuilt from the record store with one note, and the search answers exactly
as before, through every path that reads it (eager, lazy, the command line)."""

from __future__ import annotations

import contextlib
import json
import os
import random
import struct
import threading
import warnings
import zlib
from pathlib import Path

import pytest

from rlpapers import Library
from rlpapers.errors import IndexNotice

from .conftest import one_file_corpus, run


def _segment(index: Path) -> Path:
    (found,) = sorted(index.rglob("*.seg"))
    return found


def _part(segment: Path, suffix: str) -> tuple[int, int]:
    """Where the part of a compound segment whose name ends with ``suffix`` stands: its
    (offset, length), from the segment's directory (its offset first, then a varint length
    and the directory's JSON)."""
    data = segment.read_bytes()
    (where,) = struct.unpack(">q", data[:8])
    size, shift, at = 0, 0, where
    while True:
        byte = data[at]
        size |= (byte & 0x7F) << shift
        shift, at = shift + 7, at + 1
        if byte < 0x80:
            break
    directory = json.loads(data[at : at + size])
    (name,) = [name for name in directory if name.endswith(suffix)]
    return directory[name]["offset"], directory[name]["length"]


def _garble(segment: Path, start: int, end: int, step: int = 7) -> None:
    data = bytearray(segment.read_bytes())
    for at in range(start, end, step):
        data[at] ^= 0xFF
    segment.write_bytes(bytes(data))


def test_a_garbled_stored_ids_column_heals_in_a_lazy_search(seeds_copy, isolated):
    """The command line reads a search's paper ids lazily, as it prints them: damage met
    there heals as it does anywhere (it was exit 70, "internal error")."""
    args = ("--corpus", seeds_copy, "search", "policy")
    expected = {fmt: run(*args, "--all", "-f", fmt).stdout for fmt in ("ids", "jsonl")}
    for fmt, output in expected.items():
        segment = _segment(isolated / "index")
        offset, length = _part(segment, "_stored.col")
        _garble(segment, offset + 10, offset + length - 40)
        result = run(*args, "--all", "-f", fmt)
        assert result.stdout == output
        assert result.stderr.count("rebuilding") == 1


def _blocks(segment: Path) -> list[int]:
    """Where each block of postings but a term's last starts (its size, before its header) in
    the segment: a term's postings start with Whoosh's tag, then blocks follow, the last one's
    size negative."""
    data = segment.read_bytes()
    offset, length = _part(segment, ".pst")
    starts = []
    at = offset
    while at < offset + length:
        assert data[at : at + 4] == b"W3Bl"
        at += 4
        while True:
            (size,) = struct.unpack(">i", data[at : at + 4])
            if size < 0:
                at += 4 - size
                break
            starts.append(at)
            at += 4 + size
    return starts


def _many_papers(folder: Path) -> Path:
    """300 papers of random words, half of them with "policy gradient": terms of several
    blocks of postings (a block holds 128)."""
    rnd = random.Random(7)
    words = [f"{a}{b}" for a in ("re", "con", "de", "pro", "ex") for b in ("lay", "tent", "sign")]
    blocks = []
    for n in range(300):
        text = [rnd.choice(words) for _ in range(rnd.randint(30, 60))]
        if n % 2 == 0:
            text.insert(rnd.randrange(len(text)), "policy gradient")
        title = " ".join(rnd.choice(words).capitalize() for _ in range(4))
        blocks.append(f"{title}\n\n{' '.join(text).capitalize()}.")
    return one_file_corpus(folder, blocks)


def _answers(corpus: Path, index: Path, negated: str) -> list[list[tuple[str, float]]]:
    """Every hit (id, score) of four kinds of query: a word, words, a phrase, a NOT."""
    queries = ("policy", "policy gradient", 'abstract:"policy gradient"', negated)
    with Library([corpus], index_dir=index) as lib:
        found = [lib.search(q, limit=None, snippets=False) for q in queries]
    return [[(hit.paper.id, round(hit.score, 9)) for hit in hits] for hits in found]


@pytest.mark.parametrize(
    ("byte", "bit"),
    [(0, 0x80), (4, 0x80), (8, 0x01), (12, 0x10), (21, 0x01), (22, 0x01)],
    ids=["size's sign", "count", "last id", "top weight", "shortest", "longest"],
)
def test_a_flipped_bit_in_any_block_header_heals(byte, bit, tmp_path):
    """Each block of postings starts with its size and a header packed with ``struct`` (its
    postings, last document, top weight, compression and length bounds): any bits unpack, so
    a flipped bit gave fewer hits or other scores, silently (a size's sign ended a term's
    postings early; a count of 0 emptied a block). The header carries its own check: a
    flipped bit in any block heals, and the search answers as before."""
    corpus, index = _many_papers(tmp_path / "corpus"), tmp_path / "ix"

    def answers() -> list[list[tuple[str, float]]]:
        return _answers(corpus, index, "relay -policy")

    expected = answers()
    assert len(expected[0]) == 150
    segment = _segment(index)
    data = bytearray(segment.read_bytes())
    starts = _blocks(segment)
    assert len(starts) >= 3
    for start in starts:
        data[start + byte] ^= bit
    segment.write_bytes(bytes(data))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert answers() == expected
    assert [w for w in seen if issubclass(w.category, IndexNotice)]


def _toc_check(data: dict) -> int:
    """The check a table of contents carries (``plainfiles``): a CRC-32 of its generation and
    segments as canonical JSON."""
    text = json.dumps([data["generation"], data["segments"]], sort_keys=True)
    return zlib.crc32(text.encode())


def _first(data: dict) -> dict:
    return data["segments"][0]


_TOC_EDITS = {
    "a field length": (lambda d: _first(d)["fieldlengths"].update(abstract=7), False),
    "a document deleted": (lambda d: _first(d).update(deleted=[0]), False),
    "the documents counted": (
        lambda d: _first(d).update(doccount=_first(d)["doccount"] - 30),
        False,
    ),
    "a segment listed twice": (lambda d: d.update(segments=d["segments"] * 2), False),
    "planted: a segment listed twice": (lambda d: d.update(segments=d["segments"] * 2), True),
    "planted: a deletion out of range": (
        lambda d: _first(d).update(deleted=[_first(d)["doccount"] + 5]),
        True,
    ),
}


@pytest.mark.parametrize("edit", list(_TOC_EDITS))
def test_a_table_of_contents_of_valid_json_but_wrong_heals(edit, seeds_copy, tmp_path):
    """A table of contents is JSON: a flipped digit, or an edit, still reads as one. It gave
    other scores, a paper gone, negative scores, or each paper twice, without a word. It
    carries a check of its contents; and one whose check was made again (planted) must still
    name each segment once, and delete only documents it holds."""
    index = tmp_path / "ix"

    def answers() -> list[list[tuple[str, float]]]:
        return _answers(seeds_copy, index, "entropy -policy")

    expected = answers()
    (toc,) = sorted(index.rglob("_MAIN_*.toc"))
    data = json.loads(toc.read_bytes())
    change, planted = _TOC_EDITS[edit]
    change(data)
    if planted:
        data["check"] = _toc_check(data)
    toc.write_text(json.dumps(data))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert answers() == expected
    assert [w for w in seen if issubclass(w.category, IndexNotice)]


def _view_file(index: Path, which: str) -> Path:
    (gen,) = [path.parent for path in index.rglob("manifest.json")]
    found = {
        "CURRENT": gen.parent / "CURRENT",
        "manifest": gen / "manifest.json",
        "table of contents": next(gen.glob("_MAIN_*.toc")),
        "segment": _segment(index),
    }
    return found[which]


@pytest.mark.parametrize("which", ["CURRENT", "manifest", "table of contents", "segment"])
def test_a_pipe_planted_in_the_view_never_blocks_a_search(which, seeds_copy, tmp_path):
    """A FIFO in place of a view file blocked every search for ever (opening it waits for a
    writer): only regular files are read, and a pipe is damage, healed as any other."""
    index = tmp_path / "ix"
    expected = [hit.paper.id for hit in Library([seeds_copy], index_dir=index).search("policy")]
    planted = _view_file(index, which)
    planted.unlink()
    os.mkfifo(planted)
    got: list[list[str]] = []

    def search() -> None:
        with Library([seeds_copy], index_dir=index) as lib:
            got.append([hit.paper.id for hit in lib.search("policy")])

    reader = threading.Thread(target=search, daemon=True)
    reader.start()
    reader.join(60)  # a read of the pipe would never return
    blocked = reader.is_alive()
    if blocked:  # let it go: a writer that opens and closes the pipe ends its read
        with contextlib.suppress(OSError):
            os.close(os.open(planted, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(60)
    assert not blocked and got == [expected]


def test_a_manifest_nested_too_deeply_is_damage_not_an_internal_error(seeds_copy, isolated):
    """A manifest of JSON nested deeper than Python's parser recurses (``[[[…]]]``): a search
    healed it, but ``index --status`` was exit 70 (a ``RecursionError``); it is reported as
    damaged, exit 0, and the next search rebuilds it with the note."""
    expected = run("--corpus", seeds_copy, "search", "policy", "-f", "ids").stdout
    _view_file(isolated / "index", "manifest").write_text("[" * 100_000 + "]" * 100_000)
    status = json.loads(run("--corpus", seeds_copy, "index", "--status", "-f", "json").stdout)
    assert status["index"]["state"].startswith("damaged")
    result = run("--corpus", seeds_copy, "search", "policy", "-f", "ids")
    assert result.stdout == expected and "rebuilding" in result.stderr


def _bomb(megabytes: int) -> bytes:
    """zlib data of about a kilobyte a megabyte that inflates to ``megabytes`` of zeros (each
    megabyte compressed once and repeated: after a full flush they compress alike)."""
    zeros = bytes(1 << 20)
    packer = zlib.compressobj(9)
    first = packer.compress(zeros) + packer.flush(zlib.Z_FULL_FLUSH)
    again = packer.compress(zeros) + packer.flush(zlib.Z_FULL_FLUSH)
    return first + again * (megabytes - 1) + packer.flush()


def test_a_planted_block_that_inflates_to_a_gigabyte_is_refused_before_it_is_inflated():
    """A block's data is zlib: a planted block (its header's check made again) of a megabyte
    inflated to a gigabyte in memory before it was found to be no block. A block inflates to
    at most ``postings._MAX_BLOCK``; past that it is damage."""
    import io
    import tracemalloc

    from whoosh.filedb.structfile import StructFile
    from whoosh.formats import Frequency

    from rlpapers.index import postings

    bomb = _bomb(1024)
    assert len(bomb) < 2 << 20
    buffer = io.BytesIO()
    out = StructFile(buffer)
    out.write(b"W3Bl")
    fields = postings._FIELDS.pack(1, 0, 1.0, 3, 0, 0)
    size = -(postings._HEADER.size + len(bomb))  # the term's only block
    out.write_int(size)
    out.write(fields + postings._CHECK.pack(postings._check(size, fields)))
    out.write(bomb)
    data = buffer.getvalue()
    matcher = postings._LeafMatcher(StructFile(io.BytesIO(data)), 0, len(data), Frequency())
    tracemalloc.start()
    try:
        with pytest.raises(postings.Garbled):
            matcher.id()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * postings._MAX_BLOCK  # inflating takes the room it may fill, and copies


def test_a_compound_directory_of_valid_json_but_wrong_heals(seeds_copy, tmp_path):
    """A compound segment's directory is JSON (where each part of the segment starts): a
    flipped digit still reads, and a part read from the wrong place (the abstracts' lengths)
    gave other scores without a word. The directory carries a check of its bytes."""
    index = tmp_path / "ix"

    def answers() -> list[tuple[str, float]]:
        with Library([seeds_copy], index_dir=index) as lib:
            hits = lib.search("policy", limit=None, snippets=False)
        return [(hit.paper.id, round(hit.score, 9)) for hit in hits]

    expected = answers()
    segment = _segment(index)
    offset, _ = _part(segment, "_abstract_len.col")
    data = segment.read_bytes()
    (where,) = struct.unpack(">q", data[:8])
    written = b'_abstract_len.col": {"offset": %d' % offset
    at = data.index(written, where) + len(written) - 1  # the offset's last digit
    segment.write_bytes(data[:at] + b"%d" % ((data[at] - 0x30 + 1) % 10) + data[at + 1 :])
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert answers() == expected
    assert [w for w in seen if issubclass(w.category, IndexNotice)]


def test_a_planted_stored_id_that_inflates_to_a_gigabyte_is_refused_before_it_is_inflated():
    """The stored ids are zlib too, one a document: a planted one of a megabyte inflated to a
    gigabyte before it was found to be no JSON. A stored value inflates to at most
    ``plainfiles.MAX_STORED``."""
    import io
    import tracemalloc

    from whoosh import columns
    from whoosh.filedb.structfile import StructFile

    from rlpapers.index import plainfiles

    column = plainfiles._json_column()
    buffer = io.BytesIO()
    writer = column.writer(StructFile(buffer))
    columns.VarBytesColumn.Writer.add(writer._child, 0, _bomb(1024))  # as compressed
    writer.finish(1)
    data = buffer.getvalue()
    reader = column.reader(StructFile(io.BytesIO(data)), 0, len(data), 1)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="garbled stored value"):
            reader[0]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20


def test_a_writers_folder_in_the_view_is_not_damage(seeds_copy, tmp_path):
    """An update in place spills its postings to a folder in the live generation (``MAIN.tmp``):
    a search that opens the view with that folder in it (an update under way, or one that was
    killed) reads it as it is, without a rebuild; only a pipe or a device is damage."""
    index = tmp_path / "ix"
    expected = [hit.paper.id for hit in Library([seeds_copy], index_dir=index).search("policy")]
    (gen,) = [path.parent for path in index.rglob("manifest.json")]
    (gen / "MAIN.tmp").mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("error", IndexNotice)
        assert [
            hit.paper.id for hit in Library([seeds_copy], index_dir=index).search("policy")
        ] == (expected)
