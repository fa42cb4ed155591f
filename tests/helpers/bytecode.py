"""Whether a module's bytecode cache is one Python would load instead of compiling the source again."""

from __future__ import annotations

import importlib.util
import os
import struct
from pathlib import Path


def up_to_date(source: Path) -> bool:
    """``source``'s ``__pycache__`` entry for this interpreter exists and its header matches the
    source as ``import`` checks it: this Python's magic number, timestamp mode, and the source's
    modification time and size, read through a symlink as ``import`` reads them."""
    cached = Path(importlib.util.cache_from_source(os.fspath(source)))
    try:
        header = cached.read_bytes()[:16]
        info = source.stat()
    except OSError:
        return False
    if len(header) < 16 or header[:4] != importlib.util.MAGIC_NUMBER:
        return False
    flags, mtime, size = (int(field) for field in struct.unpack("<III", header[4:16]))
    return flags == 0 and mtime == int(info.st_mtime) & 0xFFFFFFFF and size == info.st_size & 0xFFFFFFFF


def every_module_up_to_date(package: Path) -> bool:
    """Every module at ``package``'s top has bytecode ``import`` would use (and it has some)."""
    modules = sorted(package.glob("*.py"))
    return bool(modules) and all(up_to_date(module) for module in modules)
