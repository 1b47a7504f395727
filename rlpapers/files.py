"""Writing output safely: ``-o`` files and stdout.

An output file is never left half-written and never clobbers what it should not:

- a regular file is written to a temporary file beside it and renamed over it, keeping the old
  file's permission bits (a new file gets the umask's, as ``>`` would give it); a new file is
  linked in only if no file has its name by then, so one another process wrote meanwhile stays;
- a symlink is followed: its target is replaced, the link stays a link;
- a character device or a FIFO (``/dev/stdout``, ``/dev/null``, a named pipe) is written
  straight, never renamed over; anything else (a folder, a socket, a block device) is refused;
- a failed write (a full disk, a closed stdout) is an ``OutputError`` with one line, and the
  temporary file is removed.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import IO

from .errors import ExportError, OutputExists


class OutputError(ExportError):
    """Output could not be written (a full disk, a closed or broken stdout)."""


def save(text: str, path: Path, force: bool = False) -> None:
    """Write ``text`` (UTF-8) to ``path`` as described above; an existing regular file is
    replaced only with ``force``."""
    data = encode(text)
    try:
        mode = path.stat().st_mode  # follows symlinks
    except FileNotFoundError:
        mode = None
    except OSError as error:
        raise ExportError(f"cannot write {path}: {error.strerror}") from None
    if mode is None or stat.S_ISREG(mode):
        if mode is not None and not force:
            raise OutputExists(str(path))
        target = Path(os.path.realpath(path))  # a symlink's target is replaced, the link kept
        try:
            _replace(target, data, path, None if mode is None else stat.S_IMODE(mode))
        except FileExistsError:  # another process made the file meanwhile: it stays
            raise OutputExists(str(path)) from None
    elif stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        _write_through(path, data)
    elif stat.S_ISDIR(mode):
        raise ExportError(f"{path} is a folder; give a file name")
    else:
        raise ExportError(f"{path} is not a regular file, a character device or a FIFO")


def encode(text: str) -> bytes:
    """UTF-8, always valid: lone surrogates (undecodable bytes of a file name) become U+FFFD."""
    try:
        return text.encode("utf-8")  # fails only on a lone surrogate
    except UnicodeEncodeError:
        from .text import valid_unicode

        return valid_unicode(text).encode("utf-8")


def _replace(target: Path, data: bytes, shown: Path, mode: int | None) -> None:
    folder = target.parent
    if not folder.is_dir():
        raise ExportError(f"cannot write {shown}: the folder {folder} does not exist")
    try:
        write_atomic(target, data, mode, replace=mode is not None)
    except FileExistsError:
        raise
    except OSError as error:
        raise OutputError(f"cannot write {shown}: {error.strerror or error}") from None


def write_atomic(path: Path, data: bytes, mode: int | None = None, replace: bool = True) -> None:
    """Replace ``path`` with ``data`` all at once: a reader (or a crash) sees the old file or
    the new one, never part of either. The data goes to a new temporary file beside ``path``
    (permission bits 0o666 minus the umask, as a shell redirection gives; ``mode`` instead
    when given), is flushed to the disk and renamed over ``path``; with ``replace`` False it
    is put there only if no file is (``FileExistsError`` else: one another process made since
    the caller looked stays). On any failure the temporary file is removed and the error
    raised as it came (``OSError`` for the system's).

    The one atomic write of the package: output files (``save``), keys.yaml (through
    ``save``) and the search view's manifest, ``CURRENT`` pointer and kept results (``index.memo``)."""
    # named after the file, cut short where its name is long: the temporary's 24 characters
    # more must stay within a file name's 255 bytes
    name = path.name if len(os.fsencode(path.name)) <= 200 else path.name[:32]
    tmp = path.with_name(f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    handle = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(handle, "wb") as out:
            if mode is not None:
                os.fchmod(out.fileno(), mode)
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        if replace:
            os.replace(tmp, path)
        else:
            _put_new(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _put_new(tmp: Path, path: Path) -> None:
    """Give ``tmp`` the name ``path`` only if no file has it: a hard link fails at once on a
    name that exists. A file system without hard links gets a rename, checked just before."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise
    except OSError:
        if os.path.lexists(path):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(path)) from None
        os.replace(tmp, path)
        return
    tmp.unlink()


def _write_through(path: Path, data: bytes) -> None:
    try:
        with open(path, "wb") as out:
            out.write(data)
    except BrokenPipeError:
        raise
    except OSError as error:
        raise OutputError(f"cannot write {path}: {error.strerror or error}") from None


def write_stdout(text: str, stream: IO[str] | None = None) -> None:
    """Write ``text`` to stdout as valid UTF-8 and flush. ``BrokenPipeError`` passes through
    (the reader went away); any other failure (a full disk, a closed stdout) is an
    ``OutputError``."""
    import sys

    stream = stream or sys.stdout
    if stream is None:  # started with stdout closed (``>&-``)
        raise OutputError("cannot write the output: stdout is closed")
    try:
        buffer = getattr(stream, "buffer", None)
        if buffer is not None:
            stream.flush()
            _write_all(buffer, encode(text))
            buffer.flush()
        else:
            stream.write(encode(text).decode("utf-8"))
            stream.flush()
    except BrokenPipeError:
        raise
    except (OSError, ValueError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise OutputError(f"cannot write the output: {reason}") from None


def _write_all(buffer: IO[bytes], data: bytes) -> None:
    """Write all of ``data``. A buffered write larger than its buffer may take only part of it
    (to a pipe whose reader went away, what fitted) and say so only by its count; the next
    write then meets the broken pipe, as a writer whose reader left should."""
    view = memoryview(data)
    while view:
        written = buffer.write(view)
        if not written:  # a non-blocking stdout that is full
            raise OSError(errno.EAGAIN, os.strerror(errno.EAGAIN))
        view = view[written:]
