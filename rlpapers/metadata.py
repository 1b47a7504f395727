"""YAML metadata overrides: what a user knows about a paper that its abstract does not say.

A sidecar ``<file stem>.yaml`` beside a corpus file, or ``metadata.yaml`` in a corpus folder, maps
paper ids or citation keys to fields::

    qerl:                      # a key or an id
      title: "QeRL: Beyond Efficiency -- Quantization-enhanced RL for LLMs"
      year: 2025
      venue: ICLR
      doi: 10.48550/arXiv.2510.11696
      tags: [quantization, llm]
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ParseError
from .text import one_line

FIELDS = {"title", "year", "venue", "url", "doi", "tags", "note", "key", "old_keys", "name"}
#: A top-level ``encoding: gb18030`` in ``<file>.yaml`` sets that file's encoding; in
#: ``metadata.yaml``, every file's of the folder. It wins over detection.
ENCODING = "encoding"
#: The years a paper may have: what the index's year field and ``--year`` ranges hold.
YEARS = (1, 9999)


@dataclass(frozen=True)
class Override:
    target: str
    values: dict[str, Any]
    source: str
    line: int


#: How much larger than its own text a metadata file may grow once its aliases are expanded,
#: in characters. Anchors and aliases (``&tags`` / ``*tags``) are fine for sharing a list;
#: nested, they multiply: 469 bytes of them stood for a 312 MB title ("billion laughs").
ALIAS_GROWTH = 1_000_000


def load_yaml(path: Path) -> Any:
    """Load YAML safely; a syntax error becomes a ParseError with the file and line, and so does
    a file whose aliases expand to more than ``ALIAS_GROWTH`` characters beyond its own text
    (checked before anything is built from it, in time linear in the file)."""
    return _document(path)[0]


def _document(path: Path) -> tuple[Any, dict[Any, int]]:
    """``load_yaml``'s value and the line of each top-level key (and, by (key, field), of
    each field of a mapping under it), from one parse. libyaml's
    parser (PyYAML's C binding) is used where PyYAML was built with it: a 480 KB metadata file
    takes a tenth of the pure-Python parser's time. A file libyaml refuses is read again by the
    pure-Python parser, which accepts a little more (a ``"\\uDC80"`` escape), so both read
    every file alike."""
    import yaml

    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ParseError(f"cannot read: {exc}", str(path)) from None
    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:
        try:
            return _parsed(text, fast, path)
        except yaml.YAMLError:
            pass
    try:
        return _parsed(text, yaml.SafeLoader, path)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ParseError(
            f"invalid YAML: {problem}", str(path), mark.line + 1 if mark else None
        ) from None


def _parsed(text: str, loader: Any, path: Path) -> tuple[Any, dict[Any, int]]:
    import yaml

    node = yaml.compose(text, Loader=loader)
    if node is None:
        return None, {}
    _check_expansion(node, 2 * len(text) + ALIAS_GROWTH, path)
    value = loader(text).construct_document(node)
    lines: dict[Any, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key, entry in node.value:
            lines[str(key.value)] = key.start_mark.line + 1
            if isinstance(entry, yaml.MappingNode):  # each field's own line, for its errors
                for name, _ in entry.value:
                    lines[(str(key.value), str(name.value))] = name.start_mark.line + 1
    return value, lines


def _check_expansion(root: Any, limit: int, path: Path) -> None:
    """Refuse a document that stands for more than ``limit`` characters once its aliases are
    expanded (a scalar counts its length plus one, a list or mapping one). Each node's expanded
    size is counted once (an alias is its anchor's node object), so the check visits each node
    of the file once, however much it stands for; a node that contains itself counts once."""
    sizes: dict[int, int] = {}
    visiting: set[int] = set()
    stack: list[Any] = [root]
    while stack:
        node = stack[-1]
        if id(node) in sizes:
            stack.pop()
            continue
        children = _children(node)
        todo = [c for c in children if id(c) not in sizes and id(c) not in visiting]
        if todo and id(node) not in visiting:
            visiting.add(id(node))
            stack.extend(todo)
            continue
        stack.pop()
        visiting.discard(id(node))
        size = 1 + (len(node.value) if not children and isinstance(node.value, str) else 0)
        size += sum(sizes.get(id(child), 0) for child in children)
        if size > limit:
            raise ParseError(
                f"its anchors and aliases expand to more than {limit:,} characters (an alias "
                "bomb?); write the values out",
                str(path),
                node.start_mark.line + 1,
            )
        sizes[id(node)] = size


def _children(node: Any) -> list[Any]:
    import yaml

    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


@dataclass(frozen=True)
class Metadata:
    """What one metadata file says: the encoding it sets for its corpus file(s), and its
    overrides. Kept by the record store as JSON (``to_json``/``from_json``), so a refresh
    reads again only the metadata files that changed."""

    encoding: str | None
    overrides: tuple[Override, ...]

    def to_json(self) -> str:
        import json

        entries = [[o.target, _plain(o.values), o.source, o.line] for o in self.overrides]
        return json.dumps({"encoding": self.encoding, "overrides": entries}, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Metadata:
        """``to_json``'s value; ``ValueError`` or ``LookupError`` for anything else (a value
        that ``read_metadata`` would never have given)."""
        import json

        from .keys import SAFE_KEY
        from .parse.text import text_codec

        data = json.loads(text)
        encoding = data["encoding"]
        if encoding is not None:
            text_codec(str(encoding))  # LookupError (a ValueError's sibling) if not a codec
        overrides = []
        for target, values, source, line in data["overrides"]:
            if not isinstance(values, dict) or not isinstance(line, int) or set(values) - FIELDS:
                raise ValueError("override")
            for name, value in values.items():
                if name == "year":
                    ok = type(value) is int and YEARS[0] <= value <= YEARS[1]
                elif name in ("tags", "old_keys"):
                    ok = isinstance(value, list) and all(type(t) is str for t in value)
                    ok = ok and (name == "tags" or all(SAFE_KEY.fullmatch(k) for k in value))
                else:
                    ok = type(value) is str
                if not ok or (name == "key" and not SAFE_KEY.fullmatch(value)):
                    raise ValueError(f"field {name}")
            for name in ("tags", "old_keys"):
                if name in values:
                    values[name] = tuple(values[name])
            overrides.append(Override(str(target), values, str(source), line))
        return cls(encoding, tuple(overrides))


def _plain(values: dict[str, Any]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}


def read_metadata(path: Path) -> Metadata:
    """A metadata file's encoding and overrides, from one parse; ``ParseError`` (file and
    line) for anything that is not a mapping of paper ids or keys to known fields."""
    data, lines = _document(path)
    if data is None:
        return Metadata(None, ())
    if not isinstance(data, dict):
        raise ParseError("expected a mapping of paper ids or keys to fields", str(path), 1)
    overrides = []
    for target, values in data.items():
        if target == ENCODING and not isinstance(values, dict):
            continue  # a file setting (``_encoding``), not a paper
        line = lines.get(str(target), 0) or None
        if not isinstance(values, dict):
            raise ParseError(f"entry {target!r} must be a mapping of fields", str(path), line)
        at = {str(name): lines.get((str(target), str(name)), line) for name in values}
        unknown = sorted(set(values) - FIELDS)
        if unknown:
            known = ", ".join(sorted(FIELDS))
            raise ParseError(
                f"unknown field {unknown[0]!r} for {target!r} (known: {known})",
                str(path),
                at.get(str(unknown[0]), line),
            )
        overrides.append(Override(str(target), _checked(values, path, at), str(path), line or 0))
    return Metadata(_encoding(data, lines, path), tuple(overrides))


def read_overrides(path: Path) -> list[Override]:
    return list(read_metadata(path).overrides)


def _checked(values: dict[str, Any], path: Path, at: dict[str, int | None]) -> dict[str, Any]:
    """The fields checked and made plain; ``at``: each field's line, for its error."""
    out: dict[str, Any] = {}
    for name, value in values.items():
        line = at.get(str(name))
        if name == "year":
            if not isinstance(value, int) or isinstance(value, bool):
                raise ParseError(f"year must be a whole number, not {value!r}", str(path), line)
            if not YEARS[0] <= value <= YEARS[1]:
                raise ParseError(
                    f"year {value} is out of range: give one from {YEARS[0]} to {YEARS[1]}",
                    str(path),
                    line,
                )
            out[name] = value
        elif name == "tags":
            items = [value] if isinstance(value, str) else value
            if not isinstance(items, list):
                raise ParseError("tags must be a list of words", str(path), line)
            out[name] = tuple(one_line(str(tag)) for tag in items)
        elif name == "key":
            out[name] = _safe_key(value, path, line)
        elif name == "old_keys":
            items = [value] if isinstance(value, str | int) else value
            if not isinstance(items, list):
                raise ParseError("old_keys must be a list of keys", str(path), line)
            out[name] = tuple(_safe_key(item, path, line) for item in items)
        else:  # hand-written YAML may hold anything: a lone surrogate, an escape sequence, a NUL
            out[name] = "" if value is None else one_line(str(value))
    return out


def _safe_key(value: Any, path: Path, line: int | None) -> str:
    from .keys import SAFE_KEY, SAFE_KEY_TEXT

    if not isinstance(value, str | int) or not SAFE_KEY.fullmatch(str(value)):
        raise ParseError(
            f"key {value!r} is not a safe citation key: use {SAFE_KEY_TEXT}", str(path), line
        )
    return str(value)


def _encoding(data: dict[Any, Any], lines: dict[Any, int], path: Path) -> str | None:
    """The ``encoding:`` a metadata file sets for its corpus file(s), checked, or None."""
    from .parse.text import text_codec

    value = data.get(ENCODING)
    if value is None or isinstance(value, dict):
        return None
    try:
        return text_codec(str(value))
    except LookupError as error:
        raise ParseError(str(error), str(path), lines.get(ENCODING)) from None


def read_encoding(path: Path) -> str | None:
    """The ``encoding:`` a metadata file sets for its corpus file(s), checked, or None."""
    return read_metadata(path).encoding


def encoding_for(file: Path, metadata: dict[Path, str | None]) -> str | None:
    """A corpus file's encoding from its own sidecar, else its folder's ``metadata.yaml``."""
    for candidate in (
        file.with_suffix(".yaml"),
        file.with_suffix(".yml"),
        file.parent / "metadata.yaml",
    ):
        if metadata.get(candidate):
            return metadata[candidate]
    return None
