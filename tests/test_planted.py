"""Files planted in the index folder never run code: Whoosh's pickles are read through a
restricted unpickler that builds only the classes a search view is made of."""

from __future__ import annotations

import pickle
import warnings
from pathlib import Path

import pytest

from rlpapers import Library
from rlpapers.errors import IndexNotice

from .conftest import run


class _Evil:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # what a planted pickle does: call anything on load
        return (Path.touch, (self.marker,))


def _plant_toc(toc: Path, payload: bytes) -> None:
    """Rewrite a Whoosh table of contents with ``payload`` as its schema and segment list,
    keeping everything else as Whoosh wrote it, so that Whoosh reaches both pickles."""
    from .test_identity_review import _rewrite_toc

    _rewrite_toc(toc, None, payload, payload)


def _tocs(folder: Path) -> list[Path]:
    return sorted(folder.rglob("_MAIN_*.toc"))


def test_a_planted_table_of_contents_runs_no_code(seeds_copy, isolated, tmp_path):
    assert run("--corpus", seeds_copy, "search", "entropy", "-f", "ids").stdout
    marker = tmp_path / "pwned"
    (toc,) = _tocs(isolated / "index")
    _plant_toc(toc, pickle.dumps(_Evil(marker), 2))
    result = run("--corpus", seeds_copy, "search", "entropy", "-f", "ids")
    assert not marker.exists()
    assert result.stdout and "rebuilding" in result.stderr  # refused, so treated as damage
    assert run("--corpus", seeds_copy, "search", "entropy", "-f", "ids").stderr == ""


def test_the_planted_pickle_would_run_under_a_plain_unpickler(tmp_path):
    """The test above is able to fail: the same bytes run code when read without the guard."""
    marker = tmp_path / "pwned"
    pickle.loads(pickle.dumps(_Evil(marker), 2))
    assert marker.exists()


def test_the_restricted_reader_refuses_a_global_outside_its_list():
    from rlpapers.index import _unpickle

    with pytest.raises(pickle.UnpicklingError, match="os.system"):
        _unpickle.loads(b"cos\nsystem\n(S'true'\ntR.")


def test_views_built_updated_and_reopened_need_nothing_outside_the_list(seeds_copy, tmp_path):
    """Every pickle Whoosh writes for a view (a first build, an update that deletes and adds
    documents) reads back through the restricted list: no rebuild notice on reopening."""
    with Library([seeds_copy]) as lib:
        assert lib.search("entropy")
    first = sorted(seeds_copy.glob("*.txt"))[0]
    text = first.read_text(encoding="utf-8")
    first.write_text(text.replace("entropy", "entropic", 1), encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error", IndexNotice)
        with Library([seeds_copy]) as lib:
            assert lib.search("entropy")
            assert lib.search("author:Bengio")
        with Library([seeds_copy]) as lib:
            assert lib.search("entropic")
