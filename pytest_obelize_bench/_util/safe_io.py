"""Reading untrusted files bounded and never through a symlink, and writing files atomically.

Run folders, records, evidence and review files are written by code the harness does not
trust, so every reader goes through here: the file is opened with ``O_NOFOLLOW`` (a symlink is
refused, not followed), must be a regular file, and is read only up to a cap.  The text and JSON
readers turn every problem into one ``UntrustedFileError`` whose message is one line naming the
file; callers wrap it into their own error type.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import stat
import tempfile
from pathlib import Path
from typing import Any, Literal


class TooLarge(Exception):
    """The file is larger than the cap; the argument is the size seen."""


class NotRegular(Exception):
    """The file is a symlink or not a regular file; the message says which."""


def open_no_follow(name: str | os.PathLike[str], dir_fd: int | None = None) -> int:
    """A read-only descriptor of ``name``; ``NotRegular`` when it is a symlink."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    flags |= getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise NotRegular("is a symlink") from None
        raise


def read_fd(fd: int, cap: int) -> bytes:
    """All of a regular file's bytes, refusing one that is (or grows) past ``cap``."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise NotRegular("is not a regular file")
    if info.st_size > cap:
        raise TooLarge(info.st_size)
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = os.read(fd, min(1 << 20, cap + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total > cap:  # grew while being read
            raise TooLarge(total)
    return b"".join(chunks)


def read_bounded(path: Path, cap: int, dir_fd: int | None = None) -> bytes:
    """A regular file (never through a symlink) of at most ``cap`` bytes.

    With ``dir_fd`` only ``path``'s name is used, relative to that open folder.  Raises
    ``TooLarge``, ``NotRegular`` or ``OSError``.
    """
    fd = open_no_follow(path if dir_fd is None else path.name, dir_fd)
    try:
        return read_fd(fd, cap)
    finally:
        os.close(fd)


def open_directory(folder: Path) -> int:
    """A descriptor of ``folder`` for reads relative to it; ``NotRegular`` for a symlink or non-folder."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        return os.open(folder, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise NotRegular("is a symlink or not a directory") from None
        raise


EntryKind = Literal["missing", "symlink", "directory", "file", "other"]


def entry_kind(path: Path) -> EntryKind:
    """What ``path`` itself is, without following a symlink; ``OSError`` when it cannot be inspected."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return "missing"
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISDIR(mode):
        return "directory"
    return "file" if stat.S_ISREG(mode) else "other"


def read_bounded_file(path: Path, cap: int) -> bytes:
    """A regular file of at most ``cap`` bytes, never read through a symlink.

    Raises ``ValueError`` with a short reason (a symlink, not a regular file, too large) or
    ``OSError`` when it cannot be opened.
    """
    try:
        return read_bounded(Path(path), cap)
    except TooLarge as size:
        raise ValueError(f"larger than the {cap} byte cap ({size} bytes)") from None
    except NotRegular as problem:
        raise ValueError(str(problem)) from None


# -- one error, one line naming the file ------------------------------------------------------


class UntrustedFileError(ValueError):
    """A file read as untrusted evidence that is missing, a symlink, not regular, too large,
    not UTF-8 or not the JSON expected; the message is one line that names the file.

    ``source`` is the file as named and ``problem`` the reason alone, for callers that name the
    file their own way.
    """

    def __init__(self, source: str, problem: str, message: str | None = None) -> None:
        super().__init__(message or f"{source}: {problem}")
        self.source = source
        self.problem = problem


def read_untrusted(path: Path, cap: int, dir_fd: int | None = None) -> bytes:
    """The bounded, symlink-refusing read, with every problem one ``UntrustedFileError``.

    With ``dir_fd`` only ``path``'s name is opened, relative to that open folder.
    """
    source = str(path)
    try:
        return read_bounded(Path(path), cap, dir_fd)
    except FileNotFoundError:
        raise UntrustedFileError(source, "missing") from None
    except TooLarge as size:
        raise UntrustedFileError(source, f"larger than the {cap} byte cap ({size} bytes)") from None
    except NotRegular as problem:
        raise UntrustedFileError(source, str(problem), f"{source} {problem}; refused") from None
    except OSError as error:
        raise UntrustedFileError(source, f"cannot be read: {error.strerror or error}") from None


def read_untrusted_text(path: Path, cap: int, dir_fd: int | None = None) -> str:
    """An untrusted UTF-8 file as text; ``UntrustedFileError`` for any problem."""
    return decode_untrusted(read_untrusted(path, cap, dir_fd), str(path))


def decode_untrusted(data: bytes, source: str) -> str:
    """Bytes read from an untrusted file as UTF-8; ``UntrustedFileError`` naming the line and byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise UntrustedFileError(source, f"is not UTF-8 text (line {line}, byte {error.start})") from None


def parse_json(text: str, source: str) -> Any:
    """``text`` as JSON of any shape; ``UntrustedFileError`` naming ``source`` when it is not JSON."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:
        raise UntrustedFileError(source, f"not JSON: {str(error)[:200]}") from None


def parse_json_object(text: str, source: str) -> dict[str, Any]:
    """``text`` as one JSON object; ``UntrustedFileError`` naming ``source`` otherwise."""
    data = parse_json(text, source)
    if not isinstance(data, dict):
        raise UntrustedFileError(source, "expected a JSON object")
    return data


def read_untrusted_json(path: Path, cap: int) -> dict[str, Any]:
    """An untrusted UTF-8 file holding one JSON object; ``UntrustedFileError`` for any problem."""
    return parse_json_object(read_untrusted_text(path, cap), str(path))


# -- writing ----------------------------------------------------------------------------------

#: Fault injection for the crash tests: the process SIGKILLs itself at the k-th write (k >= 1),
#: counting only writes under ``OBELIZE_BENCH_KILL_UNDER`` when that names a folder (a session's
#: publication into ``results/``, not the case logs it wrote before).
KILL_AT_WRITE_ENV = "OBELIZE_BENCH_KILL_AT_WRITE"
KILL_UNDER_ENV = "OBELIZE_BENCH_KILL_UNDER"
_writes = [0]


def fault_point(path: Path | None = None) -> None:
    """Count one write (of ``path``); at the k-th, with ``OBELIZE_BENCH_KILL_AT_WRITE=k``, die as a
    power loss would."""
    wanted = os.environ.get(KILL_AT_WRITE_ENV)
    if not wanted:
        return
    under = os.environ.get(KILL_UNDER_ENV)
    if under and (path is None or not Path(os.path.abspath(path)).is_relative_to(os.path.abspath(under))):
        return
    _writes[0] += 1
    if _writes[0] == int(wanted):
        os.kill(os.getpid(), signal.SIGKILL)


def write_atomically(path: Path, content: str | bytes) -> None:
    """Write through a temporary file and a rename, so a reader never sees half a file.

    Text is written as UTF-8; bytes as they are. A failure (a full disk, say) leaves no
    temporary file behind and the old file, if any, as it was.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    data = content.encode("utf-8") if isinstance(content, str) else content
    try:
        # mkstemp's file is private (0600); the file it replaces keeps its mode, a new one is 0644
        try:
            found = os.stat(path, follow_symlinks=False).st_mode
        except FileNotFoundError:
            found = 0
        os.fchmod(handle, stat.S_IMODE(found) & 0o755 if stat.S_ISREG(found) else 0o644)
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        fault_point(path)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
