"""What a case's overlay upper layer holds: bytecode caches only, or writes of its own.

Why: after its baseline, a case whose venv is an overlay of a template has written, in the usual
run, nothing there but the ``__pycache__`` of what its suite imported.  Such a view is the template
itself, so installing the new SDK into it gives what installing it into the template gives, and
the template with that install over it (``templates.Templates.publish_installed``) can be mounted
instead of installing again.  Anything else in the upper layer (a file a suite wrote or changed,
a whiteout of one it deleted, a directory it replaced) makes the view the case's own, and the new
SDK is then installed into it as the protocol says.

A bytecode cache is a ``.pyc`` file in a ``__pycache__`` folder; Python rebuilds it from its
source, so removing it changes nothing the suite can observe but time.  Empty folders are what the
overlay left when it copied a cache's parents up; one marked opaque or redirected is not empty in
meaning (it hides what the layers below hold) and is kept.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

#: The overlay's extended attributes (``trusted.`` as root, ``user.`` in a user namespace) that
#: give a folder a meaning of its own.
_MEANINGFUL_XATTRS = ("overlay.opaque", "overlay.redirect")


def _meaningful_folder(path: Path) -> bool:
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError:
        return False
    return any(name.endswith(_MEANINGFUL_XATTRS) for name in names)


def _is_cache(path: Path, mode: int) -> bool:
    return stat.S_ISREG(mode) and path.suffix == ".pyc" and path.parent.name == "__pycache__"


def drop_caches(upper: Path) -> bool:
    """Remove the bytecode caches (and the folders they leave empty) from ``upper``; True when
    nothing is left below it, so the case's view is its template's again.

    Nothing is followed: a symlink in the upper layer is content like any other file.
    """
    if not upper.is_dir() or upper.is_symlink():
        return False
    clean = True
    for folder, folders, files in os.walk(upper, topdown=False, followlinks=False):
        here = Path(folder)
        for name in [*files, *folders]:
            path = here / name
            try:
                mode = os.lstat(path).st_mode
            except FileNotFoundError:
                continue
            if _is_cache(path, mode):
                path.unlink()
            elif stat.S_ISDIR(mode) and not _meaningful_folder(path):
                try:
                    path.rmdir()  # only an empty one: what is left in it keeps it
                except OSError:
                    clean = False
            else:
                clean = False
    return clean and not any(upper.iterdir())


__all__ = ["drop_caches"]
