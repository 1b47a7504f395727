"""Hostile input and faults: bounded time, no lost or clobbered files, exit codes from the contract.

Each test here is one row of docs/reliability.md.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys

import pytest

from .conftest import SEEDS, run

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file types")


@posix_only
def test_corpus_folder_skips_fifos_sockets_devices_folders_and_broken_links(tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(SEEDS, corpus)
    os.mkfifo(corpus / "fifo.txt")  # reading it would block forever
    (corpus / "dangling.txt").symlink_to(tmp_path / "nowhere.txt")
    (corpus / "loop.txt").symlink_to(corpus / "loop.txt")
    (corpus / "folder.txt").mkdir()
    (corpus / "null.txt").symlink_to(os.devnull)
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(corpus / "sock.txt"))
        result = run("--corpus", corpus, "list", "-f", "ids")
    assert len(result.stdout.split()) == 40
    warned = {line.split(":")[1].strip().rsplit("/", 1)[-1] for line in result.stderr.splitlines()}
    assert warned == {"fifo.txt", "dangling.txt", "loop.txt", "folder.txt", "null.txt", "sock.txt"}
    assert "a FIFO" in result.stderr and "a symlink loop" in result.stderr


@posix_only
def test_a_fifo_named_as_the_corpus_is_refused_not_read(tmp_path):
    os.mkfifo(tmp_path / "fifo.txt")
    result = run("--corpus", tmp_path / "fifo.txt", "list", code=2)
    assert "not a regular file" in result.stderr
