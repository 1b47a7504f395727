"""Commands that rank papers: ``search`` (by a query) and ``similar`` (like a paper or a
text)."""

from collections.abc import Iterator
from functools import partial
from itertools import chain
from typing import TYPE_CHECKING, Annotated, NoReturn

import click
import typer

from ..config import SEARCH_MODES, SIMILAR_MODES, SORTS
from . import render
from .common import filters_of, fmt_of, library, nothing_found, shown_limit, stdin
from .errors import report
from .options import (
    AllOpt,
    AuthorOpt,
    CategoryOpt,
    DerivedOpt,
    FormatOpt,
    HeaderOpt,
    LimitOpt,
    SourceOpt,
    TagOpt,
    TopicOpt,
    VenueOpt,
    YearOpt,
    complete_query,
    complete_refs,
)
from .root import app

if TYPE_CHECKING:
    from ..hit import Hit
    from ..library import Library
    from ..request import SearchRequest

QueryArg = Annotated[
    list[str],
    typer.Argument(
        help='Words, field:value, "phrases", AND/OR/NOT, (groups), wild*, fuzzy~.',
        show_default=False,
        autocompletion=complete_query,
    ),
]
SortOpt = Annotated[
    str, typer.Option("--sort", click_type=click.Choice(SORTS), help="Order of the hits.")
]
HitScoresOpt = Annotated[
    bool, typer.Option("--scores", help="Show each hit's score (tsv: a last column).")
]
SearchModeOpt = Annotated[
    str | None,
    typer.Option(
        "--mode",
        click_type=click.Choice(SEARCH_MODES, case_sensitive=False),
        help="lexical: by words; hybrid: words and meaning; semantic: meaning only "
        "(plain words). Default: search.mode in the config, else lexical.",
        show_default=False,
    ),
]


@app.command()
def search(
    ctx: typer.Context,
    query: QueryArg,
    format: FormatOpt = None,
    limit: LimitOpt = None,
    all_: AllOpt = False,
    category: CategoryOpt = None,
    author: AuthorOpt = None,
    topic: TopicOpt = None,
    source: SourceOpt = None,
    year: YearOpt = None,
    venue: VenueOpt = None,
    tag: TagOpt = None,
    derived_titles: DerivedOpt = False,
    sort: SortOpt = "score",
    scores: HitScoresOpt = False,
    header: HeaderOpt = False,
    mode: SearchModeOpt = None,
) -> None:
    """Search the corpus: ranked hits with highlighted snippets. Exit 1 when nothing matches.

    QUERY: plain words (OR-ed, ranked), field:value (title name author category topic
    abstract source key id year venue tag doi note), "phrases", AND / OR / NOT, (groups),
    ranges (year:[2020 TO 2024]), wild*, fuzzy~.

    On a terminal the best 10 are shown (--all for every hit); in a pipe every hit is printed,
    best first, unless --limit is given.
    """
    lib, fmt = library(ctx), fmt_of(format)
    filters = filters_of(category, author, topic, source, year, venue, tag, derived_titles) or None
    snippets = render.shows_snippets(fmt)
    request = lib.request(" ".join(query), shown_limit(limit, all_), filters, sort, snippets, mode)
    hits = _hits(lib, request, fmt)
    first = next(hits, None)
    if first is None:
        _nothing_matched(lib, request)
    show = _renderer(request.mode == "lexical" and fmt == "ids", fmt, scores, header)
    if limit is not None or all_ or request.limit is None:
        show(chain([first], hits))
        return
    taken = [first, *hits]  # a terminal's short list
    show(taken)
    if len(taken) == request.limit and request.mode != "semantic":
        _note_when_cut(lib, request)


def _renderer(only_ids: bool, fmt: str, scores: bool, header: bool) -> "partial[None]":
    """How the hits are printed: their ids alone, or the hits in ``fmt``."""
    if only_ids:
        return partial(render.ids, header=header)
    return partial(render.hits, fmt=fmt, show_scores=scores, header=header)


def _hits(lib: "Library", request: "SearchRequest", fmt: str) -> "Iterator[Hit] | Iterator[str]":
    """The hits of the request, best first: lazily for a lexical one, and only their ids when
    ``fmt`` shows no more (the index has them, no record is read)."""
    if request.mode == "lexical" and fmt == "ids":
        return lib.search_ids(request)
    if request.mode == "lexical":
        return lib.iter_search(request)
    return iter(lib.search(request))


def _stdin_text() -> str:
    """The text of ``--text -``: stdin, read only as far as the longest text taken can reach
    (an endless stream, ``</dev/zero``, was read until memory ran out)."""
    from ..errors import InputError
    from ..parse.text import decode
    from ..querylang import MAX_QUERY
    from ..refs import binary

    most = 4 * MAX_QUERY + 4  # UTF-32 and its byte order mark
    data = binary(stdin()).read(most + 1)
    if len(data) > most:
        raise InputError(
            f"<stdin>: the text is longer than {MAX_QUERY:,} characters, the most --text takes"
        )
    return decode(data, "<stdin>")


def _nothing_matched(lib: "Library", request: "SearchRequest") -> NoReturn:
    """Exit 1 with a note: the similarity floor for a semantic search, else a spelling
    suggestion where the index has one."""
    if request.mode == "semantic":
        from ..semantic.modes import SIMILARITY_FLOOR

        nothing_found(f"no paper is close enough in meaning (similarity floor {SIMILARITY_FLOOR})")
    suggestion = lib.suggest(request.query)
    nothing_found(
        f'no papers match; did you mean "{suggestion}"?' if suggestion else "no papers match"
    )


def _note_when_cut(lib: "Library", request: "SearchRequest") -> None:
    """Below a terminal's short list, say on stderr when more papers matched than it shows."""
    total = lib.count(request)
    if request.limit is not None and total > request.limit:
        report(f"{request.limit} of {total} shown (--all for the rest)", "note")


RefArg = Annotated[
    str | None,
    typer.Argument(
        help="The paper's id, key or id prefix (or --text instead).",
        show_default=False,
        autocompletion=complete_refs,
    ),
]
TextOpt = Annotated[
    str | None,
    typer.Option(
        "--text",
        help="Rank the papers most like this text (a paragraph, an abstract); '-' reads it "
        "from stdin. Plain text: colons, quotes and AND/OR/NOT are words, not syntax.",
        show_default=False,
    ),
]
SimilarLimitOpt = Annotated[
    int, typer.Option("--limit", "-n", min=1, help="Show at most this many papers.")
]
SimilarScoresOpt = Annotated[
    bool, typer.Option("--scores", help="Show each paper's similarity score.")
]
SimilarModeOpt = Annotated[
    str,
    typer.Option(
        "--mode",
        click_type=click.Choice(SIMILAR_MODES, case_sensitive=False),
        help="lexical: shared distinctive words; semantic: closest in meaning; hybrid: both.",
    ),
]


@app.command()
def similar(
    ctx: typer.Context,
    ref: RefArg = None,
    text: TextOpt = None,
    format: FormatOpt = None,
    limit: SimilarLimitOpt = 10,
    scores: SimilarScoresOpt = False,
    header: HeaderOpt = False,
    mode: SimilarModeOpt = "lexical",
) -> None:
    """Papers most like REF (an id, key or id prefix), by their abstracts, REF itself excluded;
    or most like the text given with --text."""
    if (ref is None) == (text is None):
        raise typer.BadParameter("give a paper (REF) or --text, one of the two")
    if text is not None:
        if text == "-":
            text = _stdin_text()
        hits = library(ctx).similar_text(text, limit, mode=mode)
    else:
        hits = library(ctx).similar(str(ref), limit, mode=mode)
    if not hits:
        nothing_found("no similar papers")
    render.hits(hits, fmt_of(format), show_scores=scores, header=header)
