"""YAML: the same records as JSON, dumped by libyaml where PyYAML was built with it (a tenth of
the pure-Python dumper's time; the two write text that loads back to the same records, and
``tests/test_export.py`` compares them), unicode kept."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .json_ import records


def export(papers: Iterable[Any]) -> str:
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return dump(records(papers), dumper)


def dump(data: Any, dumper: Any) -> str:
    import yaml

    return str(yaml.dump(data, Dumper=dumper, allow_unicode=True, sort_keys=False, width=100))
