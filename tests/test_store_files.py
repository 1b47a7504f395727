"""The package's one atomic write (``rlpapers.files.write_atomic``)."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

import rlpapers
from rlpapers.files import write_atomic

PACKAGE = Path(rlpapers.__file__).parent


def test_write_atomic_replaces_the_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "out.json"
    target.write_bytes(b"old")
    write_atomic(target, b"new")
    assert target.read_bytes() == b"new"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_write_atomic_gives_a_new_file_the_umask_s_bits_or_the_mode_asked(tmp_path):
    umask = os.umask(0o022)
    try:
        write_atomic(tmp_path / "new", b"x")
        write_atomic(tmp_path / "private", b"x", mode=0o600)
        assert os.umask(0o022) == 0o022  # the process umask is as it was
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "private").stat().st_mode) == 0o600


def test_a_failed_write_atomic_keeps_the_old_file_and_removes_the_temporary(tmp_path, monkeypatch):
    target = tmp_path / "CURRENT"
    target.write_bytes(b"old")
    synced = []

    def no_space(fd: int) -> None:
        synced.append(fd)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", no_space)
    with pytest.raises(OSError, match="No space"):
        write_atomic(target, b"new")
    assert synced  # the data is flushed to the disk before the rename
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["CURRENT"]


def test_only_files_py_writes_a_file_atomically_and_nothing_toggles_the_umask():
    """Every atomic write goes through ``write_atomic``: no other module renames a temporary
    file over another (``os.replace``) or sets the process umask."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if re.search(r"\bos\.(replace|rename)\(|\.replace\(\s*(path|target)\b|umask\(", text):
            if path.relative_to(PACKAGE).as_posix() != "files.py" or "umask(" in text:
                offenders.append(path.relative_to(PACKAGE).as_posix())
    assert offenders == []
