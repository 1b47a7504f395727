"""A paper's id: made from its abstract alone, in the form two abstracts are compared in, so the
same text gets the same id on every run and machine (the text parser, the bibliography readers,
the ledger and pins all make it here)."""

from __future__ import annotations

from .digest import sha1


def normalise(abstract: str) -> str:
    """The form two abstracts are compared in: NFC, whitespace collapsed. (``str.split`` splits
    on exactly the characters regular expressions call ``\\s``, and does it faster; paper ids
    are made from this form, so a test holds the two equal.)"""
    import unicodedata

    return " ".join(unicodedata.normalize("NFC", abstract).split())


def paper_id(abstract: str) -> str:
    """A short id that depends only on the normalised abstract: stable across runs and machines."""
    from base64 import b32encode

    digest = sha1(normalise(abstract).encode("utf-8")).digest()
    return b32encode(digest).decode("ascii").lower()[:10]
