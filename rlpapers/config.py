"""Where things are: the config file, the corpus paths, the index folder.

Precedence, highest first: command-line options, environment variables (RLPAPERS_CORPUS,
RLPAPERS_INDEX_DIR, RLPAPERS_DATA_DIR, RLPAPERS_LEDGER, RLPAPERS_CONFIG), the YAML config file,
built-in defaults.

The index folder holds rebuildable state (the record store and the search index), one
sub-folder per corpus; the data folder holds the identity ledger, which is precious.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from .digest import sha1
from .errors import CorpusError, ParseError

if TYPE_CHECKING:
    from .key_format import KeyFormat

APP = "rlpapers"


def bundled_seeds() -> Path:
    """The seed corpus shipped with the package (inside the wheel, or the checkout's seeds/)."""
    here = Path(__file__).resolve().parent
    packaged = here / "_seeds"
    return packaged if packaged.is_dir() else here.parent / "seeds"


def expanded(text: str, where: str) -> Path:
    """A path a user gave (``where`` names the option, variable or setting), ``~`` expanded;
    ``CorpusError`` for one that names no path (a NUL byte, ``~nosuchuser``) instead of the
    exception the operating system's call would raise later."""
    if "\0" in text:
        raise CorpusError(f"{where}: the path {text!r} holds a NUL byte")
    try:
        return Path(text).expanduser()
    except RuntimeError:  # ~user of a user this system does not know
        raise CorpusError(f"{where}: cannot expand {text!r}: no such user's home folder") from None


def config_path() -> Path:
    return config_source()[0]


def config_source() -> tuple[Path, str]:
    """The config file and where its name came from: ``RLPAPERS_CONFIG`` or the platform's
    user config folder. A file named by ``RLPAPERS_CONFIG`` must exist (``read_config``)."""
    env = os.environ.get("RLPAPERS_CONFIG")
    if env:
        return expanded(env, "RLPAPERS_CONFIG"), "RLPAPERS_CONFIG"
    return user_path("config") / "config.yaml", "platform folder"


def data_root() -> Path:
    """Where the identity ledger lives: ``RLPAPERS_DATA_DIR`` or the user data folder."""
    env = os.environ.get("RLPAPERS_DATA_DIR")
    if env:
        return expanded(env, "RLPAPERS_DATA_DIR")
    return user_path("data")


def cache_root() -> Path:
    return user_path("cache")


#: The XDG variable and the folder under $HOME that platformdirs reads on Linux, per kind.
_XDG = {
    "config": ("XDG_CONFIG_HOME", ".config"),
    "data": ("XDG_DATA_HOME", ".local/share"),
    "cache": ("XDG_CACHE_HOME", ".cache"),
}


def user_path(kind: str) -> Path:
    """platformdirs' user folder of ``kind`` ("config", "data" or "cache") for this app.

    On Linux, with an absolute XDG variable, or none and an absolute $HOME, the folder is read
    from them directly, by the rule platformdirs follows there (a test compares the two):
    importing platformdirs takes about a tenth of a warm ``list``. Anything else (macOS,
    Windows, Android, a relative XDG variable, which platformdirs releases treat differently,
    no usable $HOME) asks platformdirs.
    """
    if sys.platform == "linux" and "ANDROID_DATA" not in os.environ:
        variable, under_home = _XDG[kind]
        base = os.environ.get(variable, "")
        if os.path.isabs(base):
            return Path(base, APP)
        if not base and os.path.isabs(os.environ.get("HOME", "")):
            return Path(os.path.expanduser("~"), under_home, APP)
    import platformdirs

    return Path(getattr(platformdirs, f"user_{kind}_path")(APP))


class Settings(NamedTuple):
    """The resolved configuration for one run; ``origin`` says where each value came from.
    (A named tuple: it is made at every start, and a frozen dataclass's class costs ten times
    more to make.)"""

    corpus: tuple[Path, ...]
    index_dir: Path
    config_file: Path
    data_dir: Path
    encoding: str | None = None  # every corpus file's encoding, over detection and metadata
    search_mode: str = "lexical"
    #: How many of the best BM25 candidates the proximity bonuses re-order (``search.rerank``;
    #: 0 = plain BM25, faster, see docs/search-quality.md). None: ``RERANK_WINDOW``.
    search_rerank: int | None = None
    origin: Mapping[str, str] = MappingProxyType({})
    #: A team ledger's ``postgresql://`` URL (``ledger``); None: the data folder's own ledger.
    ledger: str | None = None
    #: The user's key format for papers first seen (``keys.format``); None: the default rule.
    key_format: KeyFormat | None = None


def read_config(path: Path, named: bool = False) -> dict[str, Any]:
    """The settings of the config file at ``path``; none when the platform's file is absent.
    A file the user ``named`` (``RLPAPERS_CONFIG``) that is missing is an error, as a missing
    corpus path is: a typo must not quietly run with other settings."""
    if not path.is_file():
        if named:
            what = "is not a file" if path.exists() else "does not exist"
            raise CorpusError(f"the config file {path} named by RLPAPERS_CONFIG {what}")
        return {}
    from .metadata import load_yaml

    data = load_yaml(path)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ParseError("the config file must be a mapping of settings", str(path), 1)
    unknown = sorted(set(data) - {"corpus", "index_dir", "search", "ledger", "keys"})
    if unknown:
        raise ParseError(
            f"unknown setting {unknown[0]!r} (known: corpus, index_dir, search, ledger, keys)",
            str(path),
            setting_line(path, unknown[0]),
        )
    return data


# The choices of the search options, one list each for the config file, the library and the CLI.
#: How ``search`` ranks: words only (the default), words fused with meaning, or meaning only.
SEARCH_MODES = ("lexical", "hybrid", "semantic")
#: How ``similar`` compares: shared distinctive words, or meaning.
SIMILAR_MODES = ("lexical", "hybrid", "semantic")
#: The orders ``search`` lists its hits in.
SORTS = ("score", "title", "key")
#: How many of the best BM25 candidates the proximity bonuses re-order (``search.rerank`` sets
#: another): a constant, so the order never depends on how many hits are asked for. Chosen on
#: the odd Cranfield and CISI queries pooled (0 gave 0.383, 10 0.389, 20 0.388); a wider window
#: also makes Whoosh prune less (docs/search-quality.md).
RERANK_WINDOW = 10
#: Largest ``search.rerank`` window: each candidate is read from the store and tokenised.
MAX_RERANK = 1000


def _search_section(cfg: dict[str, Any], cfg_path: Path) -> tuple[str, int | None]:
    """``search.mode`` and ``search.rerank`` (None when not set)."""
    section = cfg.get("search") or {}
    line = setting_line(cfg_path, "search") if section else None
    if not isinstance(section, dict) or set(section) - {"mode", "rerank"}:
        raise ParseError("'search' takes two settings, 'mode' and 'rerank'", str(cfg_path), line)
    mode = section.get("mode", "lexical")
    if mode not in SEARCH_MODES:
        raise ParseError(
            f"search.mode must be one of {', '.join(SEARCH_MODES)} (not {mode!r})",
            str(cfg_path),
            line,
        )
    rerank = section.get("rerank")
    if rerank is not None and (
        isinstance(rerank, bool) or not isinstance(rerank, int) or not 0 <= rerank <= MAX_RERANK
    ):
        raise ParseError(
            f"search.rerank must be a whole number from 0 to {MAX_RERANK} (not {rerank!r})",
            str(cfg_path),
            line,
        )
    return str(mode), rerank


def resolve(
    corpus: list[Path] | None = None,
    index_dir: Path | None = None,
    encoding: str | None = None,
    writing: bool = True,
    ledger: str | None = None,
) -> Settings:
    """Settings from options (may be None), the environment and the config file. A run that
    may write (``writing``, every run but one that only reports) needs a writable index folder,
    checked at once."""
    cfg_path, origin_of_config = config_source()
    cfg = read_config(cfg_path, named=origin_of_config == "RLPAPERS_CONFIG")
    origin: dict[str, str] = {"config": origin_of_config}
    paths, origin["corpus"] = _corpus_paths(corpus, cfg, cfg_path)
    index, origin["index_dir"] = _index_dir(index_dir, cfg, paths, cfg_path)
    if writing:
        check_index_dir(index)
    mode, rerank = _search_section(cfg, cfg_path)
    found = cfg.get("search")
    search: dict[str, Any] = found if isinstance(found, dict) else {}
    origin["search.mode"] = str(cfg_path) if "mode" in search else "default"
    origin["search.rerank"] = str(cfg_path) if "rerank" in search else "default"
    origin["data_dir"] = (
        "RLPAPERS_DATA_DIR" if os.environ.get("RLPAPERS_DATA_DIR") else "platform folder"
    )
    url, origin["ledger"] = _ledger(ledger, cfg, cfg_path)
    key_format = None
    if "keys" in cfg:  # the format language is imported only where a config sets one
        key_format = _key_format(cfg, cfg_path)
    origin["keys.format"] = str(cfg_path) if key_format else "default"
    settings = (tuple(paths), index, cfg_path, data_root(), encoding, mode, rerank, origin)
    return Settings(*settings, ledger=url, key_format=key_format)


def _ledger(option: str | None, cfg: dict[str, Any], cfg_path: Path) -> tuple[str | None, str]:
    """A team ledger's URL (``--ledger``, ``RLPAPERS_LEDGER``, ``ledger:``) and where it came
    from; an empty value is the data folder's own ledger."""
    env = os.environ.get("RLPAPERS_LEDGER")
    if option is not None:
        value: Any = option
        where, origin = "--ledger", "--ledger"
    elif env is not None:
        value, where, origin = env, "RLPAPERS_LEDGER", "RLPAPERS_LEDGER"
    elif "ledger" in cfg:
        value, where, origin = cfg["ledger"], f"{cfg_path}: ledger", str(cfg_path)
    else:
        return None, "default"
    if value in (None, ""):
        return None, origin
    if not isinstance(value, str) or not value.lower().startswith(("postgresql://", "postgres://")):
        shown = "a URL of another kind" if isinstance(value, str) else repr(value)[:40]
        raise CorpusError(
            f"{where}: the ledger must be a postgresql:// URL, or empty for the data folder's "
            f"own ledger (not {shown})"
        )
    return value, origin


def _corpus_paths(
    option: list[Path] | None, cfg: dict[str, Any], cfg_path: Path
) -> tuple[list[Path], str]:
    if option:
        return [expanded(str(p), "--corpus") for p in option], "--corpus"
    env = os.environ.get("RLPAPERS_CORPUS")
    if env:
        paths = [expanded(p, "RLPAPERS_CORPUS") for p in env.split(os.pathsep) if p]
        if not paths:
            raise CorpusError(f"RLPAPERS_CORPUS={env!r} names no path")
        return paths, "RLPAPERS_CORPUS"
    if "corpus" in cfg:
        value = cfg["corpus"]
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(i, str) and i for i in items):
            raise ParseError(
                "'corpus' must be a path or a list of paths",
                str(cfg_path),
                setting_line(cfg_path, "corpus"),
            )
        if not items:
            raise ParseError(
                "'corpus' names no path", str(cfg_path), setting_line(cfg_path, "corpus")
            )
        base = cfg_path.parent
        where = f"{cfg_path}: corpus"
        return [(base / expanded(i, where)) for i in items], str(cfg_path)
    return [bundled_seeds()], "bundled seeds"


def _index_dir(
    option: Path | None, cfg: dict[str, Any], corpus: list[Path], cfg_path: Path
) -> tuple[Path, str]:
    """The corpus's own folder inside the chosen index folder: corpora that share an index
    folder keep one index each."""
    base, origin = _index_base(option, cfg, cfg_path)
    return base / corpus_fingerprint(corpus), origin


def _index_base(option: Path | None, cfg: dict[str, Any], cfg_path: Path) -> tuple[Path, str]:
    if option:
        return expanded(str(option), "--index-dir"), "--index-dir"
    env = os.environ.get("RLPAPERS_INDEX_DIR")
    if env:
        return expanded(env, "RLPAPERS_INDEX_DIR"), "RLPAPERS_INDEX_DIR"
    if "index_dir" in cfg:
        value = cfg["index_dir"]
        if not isinstance(value, str) or not value.strip():
            raise ParseError(
                f"'index_dir' must be one path, not {value!r}",
                str(cfg_path),
                setting_line(cfg_path, "index_dir"),
            )
        return expanded(value, f"{cfg_path}: index_dir"), "config file"
    return cache_root() / "index", "cache folder"


def corpus_fingerprint(paths: list[Path]) -> str:
    """A folder name that differs for each set of corpus paths."""
    joined = "\n".join(sorted(str(p.resolve()) for p in paths))
    return str(sha1(joined.encode("utf-8")).hexdigest()[:12])


def setting_line(path: Path, name: str) -> int | None:
    """The line of the config file where the setting ``name`` is, for error messages."""
    import yaml

    try:
        node = yaml.compose(path.read_text(encoding="utf-8-sig"), Loader=yaml.SafeLoader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    if not isinstance(node, yaml.MappingNode):
        return None
    return next((k.start_mark.line + 1 for k, _ in node.value if k.value == name), None)


def check_index_dir(path: Path) -> None:
    """Fail at once, with one clear line, when the index folder cannot be created or written
    (``/proc/self``, a file, a read-only folder): writing it later could wait for a lock that
    can never be taken. Nothing is written: the nearest existing folder is only looked at."""
    from .errors import IndexFolderError

    existing = path
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    if not existing.is_dir():
        reason = f"{existing} is a file, not a folder"
    elif not os.access(existing, os.W_OK | os.X_OK):
        reason = f"{existing} is not writable"
    else:
        return
    raise IndexFolderError(f"cannot write the record store in {path}: {reason}")


def _key_format(cfg: dict[str, Any], cfg_path: Path) -> KeyFormat | None:
    """The config file's ``keys: {format: "..."}``, parsed; None when it sets none. A bad
    section or format is a ``ParseError`` naming the file, its line and the format's position."""
    from .key_format import DEFAULT_EXAMPLE, KeyFormatError, parse_format

    section = cfg.get("keys")
    if section is None:
        return None
    if not isinstance(section, dict) or set(section) - {"format"}:
        raise ParseError("'keys' takes one setting, 'format'", str(cfg_path), _keys_line(cfg_path))
    text = section.get("format")
    if text is None:
        return None
    if not isinstance(text, str):
        raise ParseError(
            f'keys.format must be text such as "{DEFAULT_EXAMPLE}" (not {text!r})',
            str(cfg_path),
            _keys_line(cfg_path),
        )
    try:
        return parse_format(text)
    except KeyFormatError as error:
        raise ParseError(str(error), str(cfg_path), _keys_line(cfg_path)) from None


def _keys_line(cfg_path: Path) -> int | None:
    return setting_line(cfg_path, "keys")
