"""The search view's files hold plain data only: nothing in them is ever unpickled.

A pickle names the functions that rebuild it, so a pickle planted in an index folder would run
code on the next search. Whoosh keeps five things as pickles; rlpapers writes each its own way:

- the table of contents (schema and segment list): JSON with a CRC-32 of its segments. The
  schema is not kept: the file names the view's kind and version, and the schema is
  ``schema.schema()``;
- a compound file's directory (``StructFile.write_pickle``): JSON with its length before it
  and its CRC-32 after it;
- each postings block's header and data: ``struct`` and arrays (``postings``);
- the stored fields (the paper id): JSON, inflated to a bounded size;
- the job files the parallel writer hands its workers (transient files in the build's
  folder): ``marshal``, which builds values and never calls anything, as for spilled runs.

Then every pickle reader Whoosh holds refuses (``refuse``): a file of an older layout, or
one planted there, is damage, and the view rebuilds itself from the record store. The readers
are replaced in ``whoosh.compat`` and in every Whoosh module that holds them by name
(``sweep``, again before each index is opened). Whoosh's loaders of legacy formats are never
called: the table of contents is read here.
All of it holds for any Whoosh index written in a process that imported ``rlpapers.index``:
one of another schema is opened with its schema given, and written by one process.
"""

from __future__ import annotations

import json
import marshal
import sys
import zlib
from collections import defaultdict
from typing import Any

#: The table of contents' own format name: a file without it is not ours (older, or planted).
TOC_FORMAT = "rlpapers-toc-1"
_MAX_JSON = 1 << 26  # a directory or table of contents is kilobytes; this is damage


class Refused(ValueError):
    """A view file that is not as rlpapers writes it (a pickle to read, a failed check, a
    value out of range): damage, which the view heals by rebuilding itself."""


def refuse(*args: Any, **kwargs: Any) -> Any:
    raise Refused("a search index file holds a pickle, which rlpapers never reads")


# --- table of contents --------------------------------------------------------------------------


def _read_toc(
    cls: Any, storage: Any, indexname: str, gen: int | None = None, schema: Any = None
) -> Any:
    from whoosh.index import EmptyIndexError

    if gen is None:
        gen = cls._latest_generation(storage, indexname)
        if gen < 0:
            raise EmptyIndexError(f"Index {indexname!r} does not exist in {storage!r}")
    stream = storage.open_file(cls._filename(indexname, gen))
    try:
        data = _loads(stream.read(_MAX_JSON + 1))
    finally:
        stream.close()
    if not isinstance(data, dict) or data.get("format") != TOC_FORMAT:
        raise Refused("a table of contents rlpapers did not write")
    if data.get("generation") != gen or not isinstance(data.get("segments"), list):
        raise Refused("a garbled table of contents")
    if data.get("check") != _check(gen, data["segments"]):
        raise Refused("a table of contents that fails its check")
    segments = [_segment(item) for item in data["segments"]]
    if len({(segment.indexname, segment.segid) for segment in segments}) < len(segments):
        raise Refused("a table of contents naming a segment twice")
    return cls(schema or _kept_schema(data.get("schema")), segments, gen)


def _kept_schema(kind: Any) -> Any:
    """The schema a table of contents names: a view's is ``schema.schema()``. Any other is not
    kept (it would be a pickle): such an index is opened with its schema given."""
    from .schema import SCHEMA_VERSION, schema

    if kind != f"rlpapers-view-{SCHEMA_VERSION}":
        raise Refused("a Whoosh index of another schema: open it with its schema given")
    return schema()


def _schema_kind(given: Any) -> str | None:
    from .schema import SCHEMA_VERSION, schema

    return f"rlpapers-view-{SCHEMA_VERSION}" if given == schema() else None


def _check(generation: int, segments: list[Any]) -> int:
    """The check a table of contents carries: a CRC-32 of its generation and segments as
    canonical JSON. JSON reads from any digits, so a flipped bit in a count or a length would
    give other scores, or lose papers, without it."""
    text = json.dumps([generation, segments], sort_keys=True)
    return zlib.crc32(text.encode())


def _write_toc(self: Any, storage: Any, indexname: str) -> None:
    import time

    name = self._filename(indexname, self.generation)
    temporary = f"{name}.{time.time()}"
    segments = [_segment_data(segment) for segment in self.segments]
    data = {
        "format": TOC_FORMAT,
        "generation": self.generation,
        "schema": _schema_kind(self.schema),
        "segments": segments,
        "check": _check(self.generation, segments),
    }
    stream = storage.create_file(temporary)
    stream.write(json.dumps(data).encode())
    stream.close()
    storage.rename_file(temporary, name, safe=True)


def _segment_data(segment: Any) -> dict[str, Any]:
    codec = segment._codec
    kind = next((k for k, c in _codecs().items() if type(codec) is c), None)
    if kind is None:
        raise TypeError(f"a segment written with {type(codec).__name__}, a codec rlpapers lacks")
    deleted = segment._deleted
    return {
        "indexname": segment.indexname,
        "segid": segment.segid,
        "doccount": segment._doccount,
        "deleted": None if deleted is None else sorted(deleted),
        "compound": bool(segment.compound),
        "fieldlengths": dict(getattr(segment, "_fieldlengths", {})),
        "codec": [kind, codec._blocklimit, codec._compression, codec._inlinelimit],
    }


def _codecs() -> dict[str, Any]:
    """The codecs a segment may be written with: the view's, and Whoosh's own (which a script
    of the benchmarks, or a test, writes in the same process: its blocks are ours too)."""
    from whoosh.codec.whoosh3 import W3Codec

    from .postings import CompactCodec

    return {"compact": CompactCodec, "whoosh3": W3Codec}


def _segment(item: Any) -> Any:
    """A segment of the table of contents; ``Refused`` for anything else."""
    from whoosh.codec.whoosh3 import W3Segment

    try:
        kind, blocklimit, compression, inlinelimit = item["codec"]
        make = _codecs()[kind]
        deleted, lengths = item["deleted"], item["fieldlengths"]
        indexname, segid, doccount = item["indexname"], item["segid"], item["doccount"]
        numbers = (blocklimit, compression, inlinelimit, doccount, *(deleted or ()))
        numbers += (*lengths.values(),)
        compound = bool(item["compound"])
    except (TypeError, KeyError, ValueError, LookupError):
        raise Refused("a garbled segment in the table of contents") from None
    texts = (indexname, segid, *lengths)
    if not all(isinstance(text, str) for text in texts) or not all(
        type(n) is int and n >= 0 for n in numbers
    ):
        raise Refused("a garbled segment in the table of contents")
    if any(n >= doccount for n in deleted or ()):
        raise Refused("a segment deleting documents it does not hold")
    segment = W3Segment(make(blocklimit, compression, inlinelimit), indexname, doccount, segid)
    segment._deleted = None if deleted is None else set(deleted)
    segment.compound = compound
    segment._fieldlengths = defaultdict(int, lengths)
    return segment


# --- compound directories and stored fields -----------------------------------------------------


def _write_value(self: Any, value: Any, protocol: int = -1) -> None:
    """``StructFile.write_pickle``'s stand-in (a compound file's directory and options, a term
    index's extras): JSON, its length first and its CRC-32 after it (JSON reads from any
    digits: a flipped one in the directory read a part of the segment from the wrong place)."""
    data = json.dumps(value).encode()
    self.write_varint(len(data))
    self.write(data)
    self.write_uint(zlib.crc32(data))


def _read_value(self: Any) -> Any:
    size = self.read_varint()
    if not 0 <= size <= _MAX_JSON:
        raise Refused("a garbled index file (a length out of range)")
    data = self.read(size)
    if len(data) != size or self.read_uint() != zlib.crc32(data):
        raise Refused("a garbled index file (its check fails)")
    return _loads(data)


def _loads(data: bytes) -> Any:
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise Refused("a search index file that is not rlpapers' JSON") from None


def _json_column() -> Any:
    """A column of JSON values in place of Whoosh's pickled stored fields."""
    from whoosh import columns

    class Writer(columns.WrappedColumnWriter):
        def add(self, docnum: int, value: Any) -> None:
            data = b"" if value is None else json.dumps(value).encode()
            self._child.add(docnum, data)

    class Reader(columns.WrappedColumnReader):
        def __getitem__(self, docnum: int) -> Any:
            data = self._child[docnum]
            return _loads(data) if data else None

        def __iter__(self) -> Any:
            for data in self._child:
                yield _loads(data) if data else None

    class JsonColumn(columns.WrappedColumn):
        pass

    class Inflating(columns.CompressedBytesColumn.Reader):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            self._decompress = _inflate_stored

    class Compressed(columns.CompressedBytesColumn):
        Reader = Inflating

    JsonColumn.Writer = Writer
    JsonColumn.Reader = Reader
    return JsonColumn(Compressed())


#: The most a document's stored fields (its paper id, as JSON) inflate to; a value that would
#: inflate further is damage, found before it fills the memory (a planted value of a megabyte
#: inflated to a gigabyte).
MAX_STORED = 1 << 16


def _inflate_stored(data: bytes) -> bytes:
    from .postings import inflate

    return inflate(data, MAX_STORED, "stored value in the search index")


# --- the parallel writer's job files ------------------------------------------------------------


def _enqueue(self: Any) -> None:
    """``MpWriter._enqueue``: a batch of documents to a job file, for a worker to add."""
    from whoosh.util import random_name

    batch = self.docbuffer
    name = f"{random_name()}.doclist"
    with self.temp_storage().create_file(name).raw_file() as file:
        marshal.dump([args for _, args in batch], file)
    if len(self.tasks) < self.procs:
        self._new_task()
    self.jobqueue.put((name, len(batch)))
    self.docbuffer = []


def _process_file(self: Any, filename: str, doc_count: int) -> None:
    """``SubWriterTask._process_file``: add the documents of a job file (``_enqueue``)."""
    storage = self.writer.temp_storage()
    with storage.open_file(filename).raw_file() as file:
        batch = marshal.load(file)
    if not isinstance(batch, list) or len(batch) != doc_count:
        raise Refused("a garbled job file of the parallel writer")
    for args in batch:
        self.writer.add_document(**args)
    storage.delete_file(filename)


# --- installing ---------------------------------------------------------------------------------


#: id of each of pickle's readers Whoosh holds -> what stands in for it (``sweep``)
_REPLACED: dict[int, Any] = {}
_KEPT: list[Any] = []  # the readers themselves, alive so that no other object takes their id


def install() -> None:
    """Make Whoosh write and read the view's files as above, in this process and the workers
    it forks (once a process)."""
    import whoosh.compat

    if _REPLACED:
        sweep()
        return
    plain = whoosh.compat.pickle
    stand_in = _refusing_pickle(plain)
    readers = (whoosh.compat.load, whoosh.compat.loads, plain, plain.Unpickler)
    replacements = (refuse, refuse, stand_in, _RefusingUnpickler)
    for reader, replacement in zip(readers, replacements, strict=True):
        _KEPT.append(reader)
        _REPLACED[id(reader)] = replacement
    import whoosh.codec.whoosh3 as w3
    import whoosh.filedb.structfile as structfile
    import whoosh.index

    # (Whoosh's loaders of legacy formats, which import whatever a file names, are called only
    # from the ``TOC.read`` this replaces)
    whoosh.index.TOC.read = classmethod(_read_toc)
    whoosh.index.TOC.write = _write_toc
    structfile.StructFile.write_pickle = _write_value
    structfile.StructFile.read_pickle = _read_value
    w3.STORED_COLUMN = _json_column()
    whoosh.index.FileIndex.writer = _jobs_with_marshal(whoosh.index.FileIndex.writer)
    from .postings import plain_blocks

    plain_blocks()
    sweep()


def _jobs_with_marshal(writer: Any) -> Any:
    """``FileIndex.writer`` as Whoosh has it (``writer``), but a parallel writer hands its
    workers their documents with ``marshal``: Whoosh's job files are pickles, which its
    workers can no longer read (each would stop, and the writer wait for it for ever).
    ``whoosh.multiproc`` is imported only then: it brings in multiprocessing's queues."""

    def parallel_writer(self: Any, procs: int = 1, **kwargs: Any) -> Any:
        if procs > 1:
            if _schema_kind(self.schema) is None:
                raise ValueError(
                    "Whoosh's parallel writer opens the index without its schema, which only a "
                    "view of rlpapers can be (no pickle is read once rlpapers.index is imported)"
                )
            import whoosh.multiproc as multiproc

            multiproc.MpWriter._enqueue = _enqueue
            multiproc.SubWriterTask._process_file = _process_file
        return writer(self, procs=procs, **kwargs)

    return parallel_writer


def _refusing_pickle(module: Any) -> Any:
    """A stand-in for the ``pickle`` module Whoosh holds: it writes as pickle does (nothing of
    a view is written with it) and refuses to read."""
    import types

    stand_in = types.ModuleType(module.__name__)
    stand_in.__dict__.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
    stand_in.load = stand_in.loads = refuse  # type: ignore[attr-defined]
    stand_in.Unpickler = _RefusingUnpickler  # type: ignore[attr-defined]
    return stand_in


class _RefusingUnpickler:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        refuse()


def sweep() -> None:
    """Replace pickle's readers wherever an imported Whoosh module holds them by name
    (``whoosh.compat``'s, which are pickle's own: ``structfile.load_pickle``, ``columns.loads``)."""
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "whoosh" or name.startswith("whoosh.")):
            continue
        for attr, value in list(vars(module).items()):
            replacement = _REPLACED.get(id(value))
            if replacement is not None:
                setattr(module, attr, replacement)
