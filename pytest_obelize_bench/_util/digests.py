"""The hex sha256 the records name texts and files by (every ``*_sha256`` field and note entry).

One spelling, so a digest written by one module is the digest another checks it against.
"""

from __future__ import annotations

import hashlib


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    """The digest of ``text`` as written to disk (UTF-8)."""
    return sha256_bytes(text.encode("utf-8"))


__all__ = ["sha256_bytes", "sha256_text"]
