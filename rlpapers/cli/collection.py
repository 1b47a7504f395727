"""Commands about the collection as a whole and its upkeep: ``keys``, ``stats``, ``index``,
``config`` and ``embed``."""

from typing import TYPE_CHECKING, Annotated

import typer

from . import render
from .common import fmt_of, library
from .errors import report
from .options import ReportFormatOpt
from .root import app

if TYPE_CHECKING:
    from ..config import Settings
    from ..old_keys import Rekey

TopOpt = Annotated[int, typer.Option("--top", min=1, help="Rows per section.")]
StatusOpt = Annotated[
    bool,
    typer.Option("--status", help="Report files, records, size and freshness; build nothing new."),
]
PinOpt = Annotated[
    bool,
    typer.Option(
        "--pin",
        help="Write the keys into keys.yaml in the folder of each corpus file, so they "
        "travel with the files.",
    ),
]


RederiveOpt = Annotated[
    bool,
    typer.Option(
        "--rederive",
        help="Show old -> new for every key no metadata pins, by today's rule or keys.format; "
        "changes nothing without --apply.",
    ),
]
ApplyOpt = Annotated[
    bool,
    typer.Option(
        "--apply", help="With --rederive: give the new keys (old keys still find papers)."
    ),
]


@app.command()
def keys(
    ctx: typer.Context,
    pin: PinOpt = False,
    rederive: RederiveOpt = False,
    apply: ApplyOpt = False,
    format: ReportFormatOpt = None,
) -> None:
    """List every paper's id, citation key and corpus file; --pin writes the keys into
    keys.yaml files; --rederive shows what re-keying would change, --apply does it.

    Keys are given once by the identity ledger and never move by themselves; keys.yaml carries
    them to another machine or data folder (it is read like any metadata file).
    """
    if apply and not rederive:
        raise typer.BadParameter("--apply goes with --rederive", param_hint="--apply")
    if pin and rederive:
        raise typer.BadParameter("--pin and --rederive are separate steps", param_hint="--pin")
    lib = library(ctx)
    if rederive:
        _rederive(lib.rederive_keys(apply), apply, fmt_of(format))
        return
    if not pin:
        rows = lib.keys()
        for pid, old, new in lib.joined_keys():
            report(f"paper {pid}: the team ledger keys it {new} (it was {old} here)", "note")
        render.keys(rows, fmt_of(format))
        return
    written = lib.pin_keys()
    for path, count in written:
        report(f"wrote {count} key{'s' if count != 1 else ''} to {path}", "note")
    if not written:
        report(
            "nothing pinned: keys are never written into the bundled seeds; pin the keys of a "
            "corpus of your own (--corpus, RLPAPERS_CORPUS or the config file)",
            "note",
        )


def _rederive(changes: "list[Rekey]", applied: bool, fmt: str) -> None:
    render.report_rows(("id", "old", "new"), [(c.id, c.old, c.new) for c in changes], fmt)
    count = f"{len(changes)} key{'s' if len(changes) != 1 else ''}"
    if applied:
        report(f"gave {count}; the old keys still find their papers", "note")
    elif changes:
        report(f"{count} would change; nothing was changed (--apply gives them)", "note")
    else:
        report("every unpinned key is already what the rule gives", "note")


@app.command()
def stats(ctx: typer.Context, format: ReportFormatOpt = None, top: TopOpt = 10) -> None:
    """Counts by topic, category, author, year, venue and tag, and the most distinctive terms."""
    render.stats(library(ctx).stats(terms=top, top=top), fmt_of(format), top)


@app.command()
def index(ctx: typer.Context, status: StatusOpt = False, format: ReportFormatOpt = None) -> None:
    """Build (or rebuild) the search index now. Every other command keeps it fresh by itself.

    With --status, report where the record store and the index are and whether they are fresh,
    stale, damaged or missing, and change nothing.
    """
    lib = library(ctx, writing=not status)
    if not status:
        lib.rebuild()
    render.status(lib.status(), fmt_of(format))


@app.command()
def config(ctx: typer.Context, format: ReportFormatOpt = None) -> None:
    """Show the config file, corpus files and index folder in use, and where each came from."""
    from ..config import RERANK_WINDOW

    lib = library(ctx)
    settings = lib.settings
    exists = "" if settings.config_file.is_file() else " (not present)"
    rows = [("config file", f"{settings.config_file}{exists}", settings.origin["config"])]
    rows += [("corpus path", str(p), settings.origin["corpus"]) for p in settings.corpus]
    rows += [("corpus file", str(f), "") for f in lib.files]
    rows.append(("index dir", str(settings.index_dir), settings.origin["index_dir"]))
    rows.append(_ledger_row(settings))
    rows.append(("search.mode", settings.search_mode, settings.origin["search.mode"]))
    rerank = str(RERANK_WINDOW if settings.search_rerank is None else settings.search_rerank)
    rows.append(("search.rerank", rerank, settings.origin["search.rerank"]))
    # no format: the default rule, which no format spells (it drops the year's place and adds
    # "_" when there is no year); what is shown must never be a format the config refuses
    key_format = settings.key_format.text if settings.key_format else "the default rule"
    rows.append(("keys.format", key_format, settings.origin["keys.format"]))
    render.config(rows, fmt_of(format))


def _ledger_row(settings: "Settings") -> tuple[str, str, str]:
    """Where the identity ledger is: a team ledger's URL (without password), else the file."""
    if settings.ledger:
        from ..store.ledger.team import shown_url

        return ("ledger", shown_url(settings.ledger), settings.origin["ledger"])
    return ("ledger", str(settings.data_dir / "ledger.db"), settings.origin["data_dir"])


@app.command()
def embed(ctx: typer.Context) -> None:
    """Compute the sentence vectors that hybrid and semantic search use (only new or changed
    papers; an interrupted run keeps what it finished). Needs the semantic extra."""
    counts = library(ctx).embed(render.BuildProgress("embedding"))
    report(f"embedded {counts['embedded']} papers; {counts['stored']} have vectors", "note")
