"""Start-up hygiene: what a warm search imports, and what it does not."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
import rlpapers.cli.app
base = set(sys.modules)
from rlpapers.library import Library
lib = Library()
hits = lib.search("entropy")
loaded = set(sys.modules)
import asyncio, urllib.request
print(json.dumps({
    "hits": len(hits),
    "deferred_loaded": sorted(m for m in ("asyncio", "urllib.request", "http.client") if m in loaded),
    "rich": any(m == "rich" or m.startswith("rich.") for m in loaded),
    "yaml": "yaml" in loaded,
    "parser": "rlpapers.parse.names" in loaded,
    "real_asyncio": hasattr(asyncio, "get_event_loop"),
    "real_urllib": hasattr(urllib.request, "urlopen"),
}))
"""


def test_warm_search_imports_only_what_it_uses(isolated):
    env = {"RLPAPERS_INDEX_DIR": str(isolated / "index"), "PATH": "", "NO_COLOR": "1"}
    subprocess.run(
        [sys.executable, "-c", "from rlpapers import Library; Library().papers"],
        env=env,
        check=True,
    )
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, check=True, capture_output=True, text=True
    )
    report = json.loads(out.stdout)
    assert report["hits"] >= 1
    assert (
        report["deferred_loaded"] == []
    )  # Whoosh's unused asyncio and urllib.request stay unloaded
    assert not report["rich"] and not report["yaml"] and not report["parser"]
    assert (
        report["real_asyncio"] and report["real_urllib"]
    )  # and later imports get the real modules
