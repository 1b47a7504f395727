"""YAML: the same records as JSON, unicode kept.

The text is written by libyaml's emitter where PyYAML was built with it. PyYAML's own path to
that emitter (represent every value as a node, then serialise the nodes, asking the resolver of
each scalar whether it could be written plain) is pure Python and was 8 times the JSON export's
time. Records are lists, mappings, strings, numbers, booleans and nulls, so ``_events`` turns them
into the emitter's events directly and asks the resolver only about strings that begin with a
character some implicit type can begin with. The text is PyYAML's, byte for byte
(``tests/test_export.py`` compares the two on tricky and random data), except that a list met
twice is written twice, never as an anchor and an alias. Anything else falls back to
``yaml.dump``. The dumper is PyYAML's safe one taught YAML 1.2's numbers (``dumper_for``), so a
string is quoted wherever a YAML 1.1 or 1.2 reader would take it for something else.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from functools import cache
from typing import Any

_STR, _MAP, _SEQ = (f"tag:yaml.org,2002:{kind}" for kind in ("str", "map", "seq"))
_OPTIONS: dict[str, Any] = {"allow_unicode": True, "sort_keys": False, "width": 100}


#: Numbers in YAML 1.2 (as ruamel.yaml, yq and js-yaml read it), some of which are strings in
#: YAML 1.1, PyYAML's: an exponent without a dot or a sign (``1e3``, ``1.5e3``), a signed ``-.5``
#: and an ``0o`` octal. The export's dumper knows them too, so such a string is quoted and reads
#: back as a string in both.
_YAML_1_2_NUMBERS = (
    ("float", r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$", "-+.0123456789"),
    ("int", r"^0o[0-7]+$", "0"),
)


def export(papers: Iterable[Any]) -> str:
    import yaml

    from .json_ import records

    return dump(records(papers), dumper_for(getattr(yaml, "CSafeDumper", yaml.SafeDumper)))


@cache
def dumper_for(base: Any) -> Any:
    """``base`` (``SafeDumper`` or ``CSafeDumper``) that also quotes what YAML 1.2 reads as a
    number."""
    import re

    dumper: Any = type(f"YAML12{base.__name__}", (base,), {})
    for kind, pattern, first in _YAML_1_2_NUMBERS:
        dumper.add_implicit_resolver(f"tag:yaml.org,2002:{kind}", re.compile(pattern), list(first))
    return dumper


def dump(data: Any, dumper: Any) -> str:
    """``data`` as ``yaml.dump(data, Dumper=dumper, ...)`` would write it, faster."""
    import yaml

    try:
        events = _events(data, _Scalars(dumper))
    except TypeError:  # a value records never hold: PyYAML's representer knows it
        return str(yaml.dump(data, Dumper=dumper, **_OPTIONS))
    out = io.StringIO()
    writer = dumper(out, **_OPTIONS)
    try:
        for event in events:
            writer.emit(event)
    finally:
        writer.dispose()
    return out.getvalue()


class _Scalars:
    """How PyYAML's safe representer and ``dumper``'s resolver would write one scalar."""

    def __init__(self, dumper: Any) -> None:
        from yaml import events, nodes, representer, resolver

        self.event = events.ScalarEvent
        self.node = nodes.ScalarNode
        self.represent = representer.SafeRepresenter()
        table = dumper.yaml_implicit_resolvers
        self.resolver = resolver.Resolver()
        self.resolver.yaml_implicit_resolvers = table  # the dumper's, not the base class's
        anywhere = table.get(None, [])
        self.patterns = {
            first: tuple(pattern for _, pattern in (*rules, *anywhere))
            for first, rules in table.items()
            if first is not None
        }
        self.anywhere = tuple(pattern for _, pattern in anywhere)
        self.seen: dict[str, Any] = {}  # field names, authors and tags repeat: one event each

    def text(self, value: str) -> Any:
        event = self.seen.get(value)
        if event is None:
            event = self.event(None, _STR, (self._plain_is_str(value), True), value)
            if len(value) < 64:
                self.seen[value] = event
        return event

    def other(self, value: Any) -> Any:
        node = self.represent.represent_data(value)
        if not isinstance(node, self.node):
            raise TypeError(type(value))
        plain = self.resolver.resolve(self.node, node.value, (True, False)) == node.tag
        return self.event(None, node.tag, (plain, node.tag == _STR), node.value, style=node.style)

    def _plain_is_str(self, value: str) -> bool:
        """Whether ``value`` written plain reads back as a string (the resolver's question)."""
        for pattern in self.patterns.get(value[:1], self.anywhere):
            if pattern.match(value):
                return False
        return True


def _events(data: Any, scalars: _Scalars) -> list[Any]:
    from yaml import events

    out = [events.StreamStartEvent(), events.DocumentStartEvent(explicit=False)]
    _add(data, scalars, events, out)
    out += [events.DocumentEndEvent(explicit=False), events.StreamEndEvent()]
    return out


def _add(value: Any, scalars: _Scalars, events: Any, out: list[Any]) -> None:
    if isinstance(value, str):
        out.append(scalars.text(value))
    elif isinstance(value, dict):
        out.append(events.MappingStartEvent(None, _MAP, True, flow_style=False))
        for key, item in value.items():
            _add(key, scalars, events, out)
            _add(item, scalars, events, out)
        out.append(events.MappingEndEvent())
    elif isinstance(value, list | tuple):
        out.append(events.SequenceStartEvent(None, _SEQ, True, flow_style=False))
        for item in value:
            _add(item, scalars, events, out)
        out.append(events.SequenceEndEvent())
    elif value is None or isinstance(value, bool | int | float):
        out.append(scalars.other(value))
    else:
        raise TypeError(type(value))
