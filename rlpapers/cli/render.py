"""All terminal rendering: tables, plain lines, detail views, charts. Commands call these.

rich is imported inside the functions that draw, so machine formats never pay for it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, TYPE_CHECKING, Any

from ..errors import ExportError
from ..exporters import FORMATS, check_options, export
from ..model import Paper

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID
    from rich.table import Table
    from rich.text import Text

    from ..hit import Hit

#: Formats the CLI renders itself; every other --format name comes from the exporter registry.
VIEW_FORMATS = {
    "table": "a table on a terminal (colour only there; NO_COLOR honoured)",
    "tsv": "tab-separated lines, one record per line (the default in a pipe)",
    "ids": "paper ids, one per line (feed them to `export --ids -`)",
}
#: What commands that print papers (search, list, show, similar, parse, export) can produce.
PAPER_FORMATS = list(VIEW_FORMATS) + list(FORMATS)
#: What the reports (stats, config, index) can produce.
REPORT_FORMATS = ["table", "tsv", "json", "yaml"]
#: Paper TSV, in search, list, show, similar, parse and export: always these columns, in this
#: order (search --scores appends a score column). Lists inside a cell are joined with "; ".
TSV_COLUMNS = (
    "id", "key", "title", "authors", "year", "venue", "categories", "tags", "topic", "source"
)  # fmt: skip


def default_format(stream: IO[str] | None = None) -> str:
    """``table`` for a person at a terminal, ``tsv`` for a pipe or a file."""
    stream = stream or sys.stdout
    return "table" if _isatty(stream) else "tsv"


def is_terminal() -> bool:
    """Whether a person reads stdout (so a short list is enough) rather than a pipe or a file."""
    return _isatty(sys.stdout)


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _console(stderr: bool = False) -> Console:
    from rich.console import Console

    if sys.stdout is None and not stderr:
        from ..files import OutputError

        raise OutputError("cannot write the output: stdout is closed")
    console = Console(stderr=stderr, highlight=False, soft_wrap=False)
    console.on_broken_pipe = _broken_pipe  # type: ignore[method-assign]
    return console


def _broken_pipe() -> None:
    """Rich exits 1 when the reader goes away; the CLI's contract is 141, as for other output."""
    raise BrokenPipeError


def emit(text: str) -> None:
    from ..files import write_stdout

    write_stdout(text)


def emit_lines(lines: Iterable[str], chunk: int = 1 << 12) -> None:
    """Write lines as they are made, about 4 KB at a time (a pipe's first read): a reader that
    stops early (``| head``) stops the work at the next write."""
    pending: list[str] = []
    size = 0
    for line in lines:
        pending.append(line)
        size += len(line)
        if size >= chunk:
            emit("".join(pending))
            pending, size = [], 0
    emit("".join(pending))


# --- short forms -----------------------------------------------------------------------------


def short_authors(paper: Paper, limit: int = 2, matched: Sequence[str] = ()) -> str:
    """``Yun, St-Charles et al.``; authors a search matched are shown even when later in the
    list: ``Yun, St-Charles, …, Bengio``."""
    if not paper.authors:
        return ""
    names = [_surname(a) for a in paper.authors[:limit]]
    later = [a for a in paper.authors[limit:] if a in matched]
    if later:
        names.append("…")
        names += [_surname(a) for a in later]
    more = paper.authors_truncated or (not later and len(paper.authors) > limit)
    if later and not paper.authors_truncated and paper.authors[-1] != later[-1]:
        names.append("…")
    return ", ".join(names) + (" et al." if more else "")


def _surname(author: str) -> str:
    from ..text import surname

    return author if not author.isascii() and " " not in author else surname(author)


def _cell(value: str) -> str:
    return " ".join(value.split())


# --- papers ------------------------------------------------------------------------------------


def papers(items: Sequence[Paper], fmt: str, header: bool = False) -> None:
    if fmt == "table":
        _papers_table(items)
    elif fmt in ("tsv", "ids"):
        emit_lines(_plain_lines(items, fmt, header))
    else:
        emit(export(items, fmt))


def _plain_lines(items: Iterable[Paper], fmt: str, header: bool) -> Iterator[str]:
    """``tsv`` (TSV_COLUMNS) or ``ids`` lines, with a header line of column names if asked."""
    if fmt == "ids":
        yield from _id_lines((p.id for p in items), header)
        return
    if header:
        yield "\t".join(TSV_COLUMNS) + "\n"
    yield from (_tsv(_paper_row(p)) for p in items)


def _paper_row(paper: Paper) -> list[str]:
    from ..exporters.csv_ import cell

    return [cell(paper, column) for column in TSV_COLUMNS]


def _tsv(fields: Sequence[str]) -> str:
    return "\t".join(_cell(str(f)) for f in fields) + "\n"


TABLE_CHUNK = 100  # rows drawn at a time: `| head` gets its lines (and we our 141) at once


def _papers_table(items: Sequence[Paper]) -> None:
    """Drawn in chunks of rows with the same column widths, so a long listing starts at once."""
    from rich.cells import cell_len

    console = _console()
    key_width = max((cell_len(paper.key) for paper in items), default=3)
    for start in range(0, len(items), TABLE_CHUNK):
        table = _papers_frame(key_width, header=start == 0)
        for paper in items[start : start + TABLE_CHUNK]:
            table.add_row(
                paper.key, paper.title, short_authors(paper), " · ".join(paper.categories)
            )
        console.print(table)
    console.print(f"[dim]{len(items)} paper{'s' if len(items) != 1 else ''}[/dim]")


def _papers_frame(key_width: int, header: bool) -> Table:
    from rich.table import Table

    table = Table(show_header=header, header_style="bold", box=None, pad_edge=False, expand=True)
    table.add_column("key", style="cyan", no_wrap=True, width=max(key_width, 3))
    table.add_column("title", ratio=5, min_width=30)
    table.add_column("authors", style="green", ratio=2, min_width=12)
    table.add_column("category", style="magenta", ratio=2, min_width=12)
    return table


def detail(items: Sequence[Paper], fmt: str, header: bool = False) -> None:
    """``show``: a readable card per paper on a terminal, otherwise the chosen format."""
    if fmt != "table":
        papers(items, fmt, header)
        return
    from rich.panel import Panel
    from rich.text import Text

    console = _console()
    for paper in items:
        # Text, not markup: escaping a field for markup doubles a trailing backslash
        card = Text()
        card.append(paper.title, style="bold")
        card.append("\n\n")
        for label, value in _detail_fields(paper):
            if value:
                card.append(f"{label:<11}", style="dim")
                card.append(f"{value}\n")
        card.append(f"\n{paper.abstract}")
        console.print(Panel(card, title=Text(paper.key, style="cyan"), title_align="left"))


def _detail_fields(paper: Paper) -> list[tuple[str, str]]:
    return [
        ("id", paper.id),
        ("name", paper.name),
        ("authors", paper.author_text),
        ("categories", " · ".join(paper.categories)),
        ("topic", paper.topic),
        ("year", str(paper.year or "")),
        ("venue", paper.venue),
        ("doi", paper.doi),
        ("url", paper.first_link),
        ("tags", ", ".join(paper.tags)),
        ("note", paper.note),
        ("source", ", ".join(paper.sources or (paper.source,))),
    ]


# --- hits --------------------------------------------------------------------------------------


def shows_snippets(fmt: str) -> bool:
    """Whether ``hits`` shows the snippets in this format (search makes none otherwise): the
    table only; tsv, ids, json and the rest print none."""
    return fmt == "table"


def hits(items: Iterable[Hit], fmt: str, show_scores: bool = False, header: bool = False) -> None:
    """Hits in ``fmt``; tsv, ids and jsonl are written as the hits come (``items`` may be lazy)."""
    if fmt == "table":
        _hits_table(list(items), show_scores)
    elif fmt in ("tsv", "ids"):
        emit_lines(_hit_lines(items, fmt, show_scores, header))
    elif fmt == "jsonl":
        from ..exporters.json_ import export_jsonl

        emit_lines(export_jsonl([hit]) for hit in items)
    elif fmt in ("json", "yaml"):
        emit(export(list(items), fmt))
    else:
        emit(export([h.paper for h in items], fmt))


def ids(items: Iterable[str], header: bool = False) -> None:
    """Paper ids, one per line, written as they come."""
    emit_lines(_id_lines(items, header))


def _id_lines(items: Iterable[str], header: bool) -> Iterator[str]:
    if header:
        yield "id\n"
    yield from (f"{pid}\n" for pid in items)


def _hit_lines(items: Iterable[Hit], fmt: str, show_scores: bool, header: bool) -> Iterator[str]:
    if fmt == "ids" or not show_scores:
        yield from _plain_lines((h.paper for h in items), fmt, header)
        return
    if header:
        yield "\t".join((*TSV_COLUMNS, "score")) + "\n"
    yield from (_tsv([*_paper_row(h.paper), f"{h.score:.3f}"]) for h in items)


def _hits_table(items: Sequence[Hit], show_scores: bool) -> None:
    from rich.text import Text

    console = _console()
    for hit in items:
        head = Text.assemble((f"{hit.rank:>2}. ", "bold"), (hit.paper.key, "cyan"))
        if show_scores:
            head.append(f"  {hit.score:.2f}", style="dim")
        console.print(head)
        body = Text()
        body.append(hit.paper.title, style="bold")  # a span: Text(style=…) would style every line
        authors = short_authors(hit.paper, matched=hit.matched_authors)
        if authors:
            body.append("\n" + authors, style="green")
        if hit.snippet:
            body.append("\n")
            body.append_text(snippet_text(hit))
        for line in body.wrap(console, max(console.width - 4, 20)):
            console.print(Text("    ") + line)  # indented by hand: Padding would pad every line
        console.print()


def snippet_text(hit: Hit) -> Text:
    """The snippet with matched words styled; the text itself carries no markup."""
    from rich.text import Text

    text = Text(hit.snippet, style="dim")
    for start, end in hit.highlights:
        text.stylize("bold yellow not dim", start, end)
    return text


def exported_text(items: Sequence[Paper], fmt: str, options: dict[str, Any]) -> str:
    """``export``'s output as text: the exporters' formats with options, or tsv/ids.

    An option the format cannot honour (``--ascii`` with tsv) is an ``ExportError``.
    """
    if fmt in FORMATS:
        return export(items, fmt, **options)
    if fmt == "table":
        raise ExportError("--format table is drawn for a terminal; for a file use tsv or csv")
    check_options(fmt, options)
    return "".join(_plain_lines(items, fmt, header=False))


def exported(items: Sequence[Paper], fmt: str, options: dict[str, Any]) -> None:
    if fmt == "table":
        check_options(fmt, options)
        _papers_table(items)
    else:
        emit(exported_text(items, fmt, options))


# --- config and stats ---------------------------------------------------------------------------


def config(rows: list[tuple[str, str, str]], fmt: str) -> None:
    """``rlpapers config``: (setting, value, origin) rows."""
    report_rows(("setting", "value", "from"), rows, fmt)


def keys(rows: list[tuple[str, str, str]], fmt: str) -> None:
    """``rlpapers keys``: (id, key, corpus file) rows."""
    report_rows(("id", "key", "file"), rows, fmt)


def report_rows(columns: tuple[str, ...], rows: Sequence[tuple[str, ...]], fmt: str) -> None:
    """Rows of a report in ``fmt`` (a table, tsv lines, or records in json/yaml); text is shown
    with its control characters escaped (``shown``: a corpus path may hold some)."""
    from ..text import shown

    rows = [tuple(shown(value) for value in row) for row in rows]  # a list of its own
    if fmt in ("json", "yaml"):
        _emit_structured([dict(zip(columns, row, strict=True)) for row in rows], fmt)
        return
    if fmt == "table":
        from rich.table import Table

        table = Table(box=None, show_header=True, header_style="bold")
        for column in columns:
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(*row)
        _console().print(table)
        return
    emit("".join(_tsv(row) for row in rows))


def stats(data: dict[str, Any], fmt: str, top: int) -> None:
    sections = [
        ("topics", "topic"),
        ("categories", "category"),
        ("authors", "author"),
        ("years", "year"),
        ("venues", "venue"),
        ("tags", "tag"),
        ("terms", "term"),
    ]
    if fmt in ("json", "yaml"):
        out = {"papers": data["papers"], "files": data["files"]}
        for section, label in sections:
            value = "score" if section == "terms" else "count"
            out[section] = [
                {label: k, value: round(v, 3) if isinstance(v, float) else v}
                for k, v in data[section][:top]
            ]
        _emit_structured(out, fmt)
    elif fmt == "table":
        _stats_charts(data, sections, top)
    else:
        rows = [
            [section, str(k), f"{v:.3f}" if isinstance(v, float) else str(v)]
            for section, _ in sections
            for k, v in data[section][:top]
        ]
        emit("".join(_tsv(row) for row in rows))


def _emit_structured(data: Any, fmt: str) -> None:
    if fmt == "json":
        import json

        emit(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    else:
        import yaml

        emit(yaml.safe_dump(data, allow_unicode=True, sort_keys=False))


def _stats_charts(data: dict[str, Any], sections: list[tuple[str, str]], top: int) -> None:
    from rich.text import Text

    console = _console()
    console.print(f"[bold]{data['papers']} papers[/bold] in {data['files']} files\n")
    for section, _ in sections:
        rows = data[section][:top]
        if not rows:
            continue
        console.print(f"[bold]{section}[/bold]")
        peak = max(v for _, v in rows) or 1
        width = max(len(str(k)) for k, _ in rows)
        for key, value in rows:
            bar = "█" * max(1, round(24 * value / peak))
            number = f"{value:.1f}" if isinstance(value, float) else str(value)
            pad = " " * (width - _cells(str(key)))
            console.print(Text.assemble(f"  {key}{pad}  ", (bar, "cyan"), f" {number}"))
        console.print()


def _cells(text: str) -> int:
    from rich.cells import cell_len

    return cell_len(text)


def status(data: dict[str, Any], fmt: str) -> None:
    if fmt in ("json", "yaml"):
        _emit_structured(data, fmt)
        return
    rows = [(k, _status_value(v), "") for k, v in _flat(data)]
    config(rows, "table" if fmt == "table" else "tsv")


def _flat(data: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in data.items():
        if isinstance(value, dict):
            out += _flat(value, f"{prefix}{key} ")
        else:
            out.append((f"{prefix}{key}", value))
    return out


def _status_value(value: Any) -> str:
    return ", ".join(map(str, value)) or "none" if isinstance(value, list) else str(value)


class BuildProgress:
    """A progress bar on stderr for index builds that take more than a second, on a terminal only."""

    DELAY = 1.0

    def __init__(self, label: str = "indexing") -> None:
        import time

        self.label = label
        self._clock = time.monotonic
        self._start: float | None = None
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def __call__(self, done: int, total: int) -> None:
        if not _isatty(sys.stderr):
            return
        now = self._clock()
        if self._start is None:
            self._start = now
        if self._bar is None and now - self._start >= self.DELAY and done < total:
            self._open(total)
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=done, total=total)
            if done >= total:
                self._bar.stop()
                self._bar = None

    def _open(self, total: int) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        self._bar = Progress(
            TextColumn(self.label),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=_console(stderr=True),
            transient=True,
        )
        self._task = self._bar.add_task("index", total=total)
        self._bar.start()
