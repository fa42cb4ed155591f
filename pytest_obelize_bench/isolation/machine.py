"""The names that tell which machine ran a step: its user's, its host's, and that user's home.

A repository's suite can print them (``getpass.getuser()``, ``socket.gethostname()``, the home the
password database gives, whatever HOME a step was given), and what a suite prints is published.
``label_names`` shows the user and the host as ``<user>`` and ``<host>``; the home is a path, so
it is labelled ``<home>`` with the harness's own paths (``case/work_folder.py``).
"""

from __future__ import annotations

import functools
import os
import pwd
import re
import socket
from dataclasses import dataclass

USER = "<user>"
HOST = "<host>"
#: A name shorter than this is left alone: one letter names nobody, and is a word of every text.
NAME_MIN_CHARS = 2

#: Where a name begins: not inside a longer word, a file name or a path (``src/root/x`` is the
#: repository's; ``<user>`` is a label), but after ``//`` (``ssh://alice@laptop``).
_NAME_START = r"(?:(?<![\w./<>-])|(?<=//))"
#: Where the user's name ends: not before more of a word, a file name's extension or a path.
_USER_END = r"(?![\w/<>-]|\.[\w-])"
#: Where a host's name ends: its domain is taken with it (``laptop.example.org``), and a path may
#: follow it (``http://laptop/x``).
_HOST_END = r"(?:\.[\w-]+)*(?![\w<>-]|\.[\w-])"


@dataclass(frozen=True)
class MachineNames:
    """What names this machine: the user (from the password database), the host, the user's home."""

    user: str | None = None
    host: str | None = None
    #: the home the password database gives, whatever HOME says
    home: str | None = None


@functools.cache
def this_machine() -> MachineNames:
    """This process's user, host and home; a user the password database does not know has neither
    name nor home (a container's arbitrary uid)."""
    user = home = None
    try:
        entry = pwd.getpwuid(os.getuid())
        user, home = entry.pw_name, entry.pw_dir
    except KeyError:  # a uid without an entry
        pass
    return MachineNames(user=user or None, host=socket.gethostname() or None, home=home or None)


@functools.lru_cache(maxsize=8)
def _pattern(names: MachineNames) -> re.Pattern[str] | None:
    parts = []
    if names.user and len(names.user) >= NAME_MIN_CHARS:
        parts.append(f"(?P<user>{re.escape(names.user)}){_USER_END}")
    short = (names.host or "").split(".", 1)[0]
    if len(short) >= NAME_MIN_CHARS:
        parts.append(f"(?P<host>{re.escape(short)}){_HOST_END}")
    return re.compile(f"{_NAME_START}(?:{'|'.join(parts)})", re.IGNORECASE) if parts else None


def label_names(text: str, names: MachineNames) -> str:
    """``text`` with the user's name as ``<user>`` and the host's as ``<host>``, each as a whole word.

    The user's name may be a common word (``root``, ``runner``, ``app``): it is replaced where it
    stands alone (``user=root``, ``root@laptop``), never inside a longer word, a file name or a path
    (``rootdir``, ``root.py``, ``src/root/x``), so a relative path of the repository reads as it
    was.  The host is matched by its first label, its domain taken with it (so a file named after
    the host, ``laptop.log``, reads ``<host>`` too: a host's name is rarely a word).  Both ignore case.
    """
    pattern = _pattern(names)
    if pattern is None:
        return text
    return pattern.sub(lambda match: USER if match.group("user") is not None else HOST, text)


__all__ = ["HOST", "NAME_MIN_CHARS", "USER", "MachineNames", "label_names", "this_machine"]
