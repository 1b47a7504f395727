"""Where things are: the config file, the corpus paths, the index folder.

Precedence, highest first: command-line options, environment variables (RLPAPERS_CORPUS,
RLPAPERS_INDEX_DIR, RLPAPERS_DATA_DIR, RLPAPERS_CONFIG), the YAML config file, built-in defaults.

The index folder holds rebuildable state (the record store and the search index), one
sub-folder per corpus; the data folder holds the identity ledger, which is precious.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import CorpusError, ParseError

APP = "rlpapers"


def bundled_seeds() -> Path:
    """The seed corpus shipped with the package (inside the wheel, or the checkout's seeds/)."""
    here = Path(__file__).resolve().parent
    packaged = here / "_seeds"
    return packaged if packaged.is_dir() else here.parent / "seeds"


def config_path() -> Path:
    env = os.environ.get("RLPAPERS_CONFIG")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_config_path

    return user_config_path(APP) / "config.yaml"


def data_root() -> Path:
    """Where the identity ledger lives: ``RLPAPERS_DATA_DIR`` or the user data folder."""
    env = os.environ.get("RLPAPERS_DATA_DIR")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_data_path

    return user_data_path(APP)


def cache_root() -> Path:
    from platformdirs import user_cache_path

    return user_cache_path(APP)


@dataclass(frozen=True)
class Settings:
    """The resolved configuration for one run; ``origin`` says where each value came from."""

    corpus: tuple[Path, ...]
    index_dir: Path
    config_file: Path
    data_dir: Path = field(default_factory=data_root)
    origin: dict[str, str] = field(default_factory=dict, compare=False)


def read_config(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    from .metadata import load_yaml

    data = load_yaml(path)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ParseError("the config file must be a mapping of settings", str(path), 1)
    unknown = sorted(set(data) - {"corpus", "index_dir"})
    if unknown:
        raise ParseError(f"unknown setting {unknown[0]!r} (known: corpus, index_dir)", str(path))
    return data


def resolve(corpus: list[Path] | None = None, index_dir: Path | None = None) -> Settings:
    """Settings from options (may be None), the environment and the config file."""
    cfg_path = config_path()
    cfg = read_config(cfg_path)
    origin: dict[str, str] = {}
    paths, origin["corpus"] = _corpus_paths(corpus, cfg, cfg_path)
    index, origin["index_dir"] = _index_dir(index_dir, cfg, paths)
    return Settings(tuple(paths), index, cfg_path, data_root(), origin)


def _corpus_paths(
    option: list[Path] | None, cfg: dict[str, Any], cfg_path: Path
) -> tuple[list[Path], str]:
    if option:
        return [Path(p).expanduser() for p in option], "--corpus"
    env = os.environ.get("RLPAPERS_CORPUS")
    if env:
        return [Path(p).expanduser() for p in env.split(os.pathsep) if p], "RLPAPERS_CORPUS"
    if "corpus" in cfg:
        value = cfg["corpus"]
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise CorpusError(f"{cfg_path}: 'corpus' must be a path or a list of paths")
        base = cfg_path.parent
        return [(base / Path(i).expanduser()) for i in items], str(cfg_path)
    return [bundled_seeds()], "bundled seeds"


def _index_dir(option: Path | None, cfg: dict[str, Any], corpus: list[Path]) -> tuple[Path, str]:
    """The corpus's own folder inside the chosen index folder: corpora that share an index
    folder keep one index each."""
    base, origin = _index_base(option, cfg)
    return base / corpus_fingerprint(corpus), origin


def _index_base(option: Path | None, cfg: dict[str, Any]) -> tuple[Path, str]:
    if option:
        return Path(option).expanduser(), "--index-dir"
    env = os.environ.get("RLPAPERS_INDEX_DIR")
    if env:
        return Path(env).expanduser(), "RLPAPERS_INDEX_DIR"
    if "index_dir" in cfg:
        return Path(str(cfg["index_dir"])).expanduser(), "config file"
    return cache_root() / "index", "cache folder"


def corpus_fingerprint(paths: list[Path]) -> str:
    """A folder name that differs for each set of corpus paths."""
    joined = "\n".join(sorted(str(p.resolve()) for p in paths))
    return hashlib.sha1(joined.encode("utf-8")).hexdigest()[:12]
