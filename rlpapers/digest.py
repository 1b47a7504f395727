"""SHA-1 for the short texts hashed on every run (ids, the index folder's name).

``hashlib`` loads OpenSSL, about 11 ms of a 100 ms start; CPython's own ``_sha1`` gives the
same digests at once. Files are hashed with ``hashlib`` (faster on megabytes), imported only
when a file is read.
"""

from __future__ import annotations

try:
    from _sha1 import sha1
except ImportError:  # another Python implementation
    from hashlib import sha1

__all__ = ["sha1"]
