"""Offline semantic search: sentence embeddings, dense top-k and rank fusion.

The only package that imports onnxruntime, tokenizers and numpy (the ``semantic`` extra). Nothing
heavy is imported here: ``load_encoder()`` imports them when first asked, and raises
``SemanticUnavailable`` (with the install command) when the extra is missing, so the rest of
rlpapers works without it.

- ``encoder``: the shipped all-MiniLM-L6-v2 (int8 ONNX) — tokenise, run, mean-pool under the
  attention mask, L2-normalise; texts are embedded in batches.
- ``dense``: the k best rows of a float32 matrix of unit vectors for one query vector.
- ``fusion``: min-max and reciprocal-rank fusion of a lexical and a dense ranked list.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ModelUnreadable, SemanticUnavailable

if TYPE_CHECKING:
    from .encoder import Encoder

__all__ = ["INSTALL_HINT", "MODEL_DIR", "MODEL_NAME", "SemanticUnavailable", "check_available"]

MODEL_NAME = "all-minilm-l6-v2-int8"
MODEL_DIR = Path(__file__).resolve().parents[1] / "models" / MODEL_NAME
INSTALL_HINT = SemanticUnavailable.INSTALL

#: Python modules the extra provides, in the order they are imported.
REQUIRED_MODULES = ("numpy", "onnxruntime", "tokenizers")


def check_available() -> None:
    """Raise ``SemanticUnavailable`` unless numpy, onnxruntime and tokenizers all import."""
    from importlib import import_module

    missing = []
    for name in REQUIRED_MODULES:
        try:
            import_module(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise SemanticUnavailable(", ".join(missing))


def load_encoder() -> Encoder:
    """The shipped model, loaded once per process; ``ModelUnreadable`` when its files are
    missing or damaged."""
    check_available()
    from .encoder import Encoder

    with model_files():
        return Encoder.shipped()


@contextmanager
def model_files() -> Iterator[None]:
    """What goes wrong reading the model's files (gone: ``OSError``; damaged: onnxruntime's and
    tokenizers' own exceptions, which share no base class) as ``ModelUnreadable``."""
    try:
        yield
    except Exception as error:
        lines = str(error).strip().splitlines()
        reason = lines[0] if lines else type(error).__name__
        raise ModelUnreadable(MODEL_DIR, reason) from None
