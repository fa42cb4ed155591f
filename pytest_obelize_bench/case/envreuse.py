"""Environment reuse: a pinned install whose environment another case already resolved runs offline.

Measured on a 2-core machine with a warm uv cache: ``uv pip install google-generativeai==0.8.6``
into a fresh venv takes about 2.3 s online (uv revalidates every index page) and 0.15 s with
``--offline`` (the same wheels hard-linked from the cache); copying a finished 180 MB venv took
longer than either.  So cases share the *resolution*, not the venv: each case still gets its own
venv, its own install and its own ``importlib.metadata`` check.

The first online install of an environment writes a mark: its environment key, when it ran, and
the exact versions it installed (uv's ``+ name==version`` lines).  A later install with the same
key and a mark no older than ``exclude_newer`` goes offline *constrained to those versions*
(``--constraint``).  The constraint is what makes it the same environment: the uv cache is shared,
and an index page another process wrote there can be older than the mark (seen here: a page
without idna 3.21, uploaded hours before, made an unconstrained offline install choose 3.20 where
the online one chose 3.21).  A constrained offline install that cannot find a version fails, and the
install then runs online as without reuse.  A mark whose install output does not list what it
installed (a quiet command, a cut log) has no versions and never sends an install offline.

Identical environments: the same interpreter used, the same ``exclude_newer``, the same install
commands, and the same pins installed before this one.  ``uv pip install`` of exact pins, or of a
requirements file of exact pins (by its content), is the same for any case.  An install that reads
more of its checkout (``uv pip install .``, a requirements file of ranges, a name without a pin) is
the same only for the same commit: the key then names it, with every file the commands name by its
content, so the next round of the case reuses what this one installed, and a new commit installs
again.  Anything a key cannot cover (an editable install, an index option, a URL, a path outside
the checkout) has no key and always installs online.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from pytest_obelize_bench._util.caps import REQUIREMENTS_BYTES
from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench._util.clock import UTC_FORMAT, utc_now
from pytest_obelize_bench._util.digests import sha256_bytes, sha256_text
from pytest_obelize_bench._util.locks import exclusive_lock
from pytest_obelize_bench._util.safe_io import read_bounded_file

_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9,._-]+\])?"
_PINNED = re.compile(_NAME + r"==[A-Za-z0-9][A-Za-z0-9.+!_-]*")
#: A requirement the package index alone resolves, at the round's cutoff: a name, its extras, ranges.
_SPECIFIER = r"(===?|>=|<=|~=|!=|<|>)[A-Za-z0-9][A-Za-z0-9.*+!_-]*"
_INDEXED = re.compile(_NAME + rf"({_SPECIFIER}(,{_SPECIFIER})*)?")
#: The checkout itself, as an install command names it (with extras).
_CHECKOUT = re.compile(r"\./?(\[[A-Za-z0-9,._-]+\])?")
MARKS_DIR = "env-marks"
#: The largest requirements file whose content an environment key covers.
REQUIREMENTS_CAP = REQUIREMENTS_BYTES


def _requirements_material(checkout: Path | None, name: str) -> tuple[str, bool] | None:
    """``-r sha256:<digest>`` of a checkout's requirements file, and whether it reads more than the
    package index (then only the same commit shares it); None when a key cannot cover it.

    The file is read as untrusted input: a relative path inside the checkout, no symlink, at
    most ``REQUIREMENTS_CAP`` bytes of UTF-8.  Lines of exact pins are the same for any case;
    ranges, bare names and the checkout itself (``.``, ``-e .`` is refused) need the commit; an
    option, an include, a URL or another path makes it unshared.
    """
    relative = Path(name)
    if checkout is None or relative.is_absolute() or ".." in relative.parts or not relative.parts:
        return None
    try:
        data = read_bounded_file(checkout / relative, REQUIREMENTS_CAP)
        text = data.decode("utf-8")
    except (OSError, ValueError):
        return None
    reads_checkout = False
    for line in text.splitlines():
        requirement = line.split(" #", 1)[0].strip()
        if requirement.startswith("#") or not requirement:
            continue
        if _PINNED.fullmatch(requirement):
            continue
        if not (_INDEXED.fullmatch(requirement) or _CHECKOUT.fullmatch(requirement)):
            return None
        reads_checkout = True
    return "-r sha256:" + sha256_bytes(data), reads_checkout


def _command_material(command: str, checkout: Path | None) -> tuple[str, bool] | None:
    """The command as a key covers it, and whether it reads more of the checkout than a pin list."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if words[:3] != ["uv", "pip", "install"] or len(words) == 3:
        return None
    material: list[str] = []
    reads_checkout = False
    rest = iter(words[3:])
    for word in rest:
        if word in ("-r", "--requirement"):
            found = _requirements_material(checkout, next(rest, ""))
            if found is None:
                return None
            material.append(found[0])
            reads_checkout = reads_checkout or found[1]
        elif _PINNED.fullmatch(word):
            material.append(word)
        elif _INDEXED.fullmatch(word) or _CHECKOUT.fullmatch(word):
            material.append(word)
            reads_checkout = True
        else:
            return None
    return " ".join(["uv pip install", *material]), reads_checkout


def command_material(
    commands: Sequence[str], checkout: Path | None = None, commit: str | None = None
) -> list[str] | None:
    """What of ``commands`` an environment key covers, or None when a key cannot cover them.

    Shared by any case: ``uv pip install`` of exact pins, and of ``-r FILE`` whose file holds only
    exact pins; the file stands in the key by its sha256, so two checkouts share only identical
    files.  Shared by the same commit only (the key then ends with ``commit <sha>``): commands that
    read the checkout itself, or resolve ranges and bare names, which the cutoff fixes.
    """
    material: list[str] = []
    reads_checkout = False
    for command in commands:
        found = _command_material(command, checkout)
        if found is None:
            return None
        material.append(found[0])
        reads_checkout = reads_checkout or found[1]
    if reads_checkout:
        if not commit:
            return None
        material.append(f"commit {commit}")
    return material


def environment_key(
    *,
    interpreter_used: str,
    exclude_newer: str | None,
    uv_cache: str | None,
    commands: Sequence[str] | None,
    installs: Sequence[str],
    link_mode: str = "symlink",
) -> str | None:
    """The key of the environment ``installs`` (``dist==version``, in order) produce; None if unshared.

    ``commands`` is ``command_material`` of the case's install commands (None: unshared).
    ``link_mode`` is how uv placed the files (``symlink`` into its cache, or ``copy`` without a
    sandbox): a template of links must never serve a case that may write through them.
    """
    if not interpreter_used or not exclude_newer or commands is None:
        return None
    text = json.dumps(
        {
            "interpreter": interpreter_used,
            "exclude_newer": exclude_newer,
            "uv_cache": uv_cache or "",
            "commands": list(commands),
            "installs": list(installs),
            **({} if link_mode == "symlink" else {"link_mode": link_mode}),
        },
        sort_keys=True,
    )
    return sha256_text(text)


#: uv's summary of a resolution that changed nothing, or the start of one that did.
_RESOLVED = re.compile(r"(Resolved|Audited|Checked) \d+ packages?\b.*")
_INSTALLED = re.compile(r"Installed (\d+) packages?\b.*")
#: One change uv made: `` + name==version``, `` - name==version``, `` ~ name==version`` (reinstalled);
#: a local project adds `` (from file://...)``.
_CHANGE = re.compile(r" ([+~-]) ([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9][A-Za-z0-9.+!_-]*)( \(from .*\))?")


def installed_versions(outputs: Sequence[str]) -> list[str] | None:
    """The ``name==version`` of every index package that ``uv pip install`` runs put in, from
    what they printed; None when an output does not account for its installs (quiet, or cut short).

    A package from the checkout itself (``(from file://...)``) is no pin of the index and is left
    out: its version is the commit's, which the key names.
    """
    chosen: dict[str, str] = {}
    for output in outputs:
        lines = output.splitlines()
        if not any(_RESOLVED.fullmatch(line.strip()) for line in lines):
            return None
        declared = [int(found.group(1)) for line in lines if (found := _INSTALLED.fullmatch(line.strip()))]
        added = 0
        for line in lines:
            change = _CHANGE.fullmatch(line.rstrip())
            if change is None:
                continue
            sign, name, version, local = change.groups()
            if sign == "-":
                chosen.pop(name, None)
                continue
            added += 1
            if local is None:
                chosen[name] = version
            else:
                chosen.pop(name, None)
        if sum(declared) != added:
            return None
    return [f"{name}=={version}" for name, version in sorted(chosen.items())]


def _ran_after(at: object, exclude_newer: str) -> bool:
    """Whether a mark's ``at`` is a time at or after ``exclude_newer``."""
    try:
        ran = datetime.strptime(str(at), UTC_FORMAT).replace(tzinfo=UTC)
        cutoff = datetime.strptime(exclude_newer, UTC_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        return False
    return ran >= cutoff


#: The largest mark read: a resolution of a few hundred packages fits many times over.
MARK_BYTES = 256 * 1024


class Marks:
    """The marks of online installs, one small file per environment key under ``<work>/env-marks``."""

    def __init__(self, work_root: Path) -> None:
        self.root = Path(work_root) / MARKS_DIR

    def _path(self, key: str) -> Path:
        if not re.fullmatch(r"[0-9a-f]{64}", key):
            raise ValueError(f"{key!r} is not an environment key")
        return self.root / f"{key}.json"

    def versions(self, key: str, exclude_newer: str) -> list[str] | None:
        """The versions an online install of ``key`` at or after the cutoff chose; None: go online."""
        path = self._path(key)
        if path.is_symlink() or not path.is_file():
            return None
        try:
            mark = json.loads(read_bounded_file(path, MARK_BYTES).decode("utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(mark, dict) or not _ran_after(mark.get("at"), exclude_newer):
            return None
        versions = mark.get("versions")
        if not isinstance(versions, list):
            return None
        if not all(isinstance(pin, str) and _PINNED.fullmatch(pin) for pin in versions):
            return None
        return versions

    def mark(self, key: str, at: str, versions: Sequence[str]) -> None:
        """Record an online install of ``key`` that started at ``at`` and chose ``versions`` (atomically)."""
        path = self._path(key)
        self.root.mkdir(parents=True, exist_ok=True)
        with exclusive_lock(self.root / ".lock"):
            temporary = path.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_text(json.dumps({"at": at, "versions": list(versions)}) + "\n", encoding="utf-8")
            os.replace(temporary, path)


#: What an install gets from ``reuse_install``: the constraints file of an offline install (None:
#: online), and the list it appends the output of each online ``uv pip install`` to.
Install = Callable[[Path | None, list[str]], str]
CONSTRAINTS_NAME = "offline-constraints.txt"


def reuse_install(install: Install, *, marks: Marks, key: str | None, exclude_newer: str | None, scratch: Path) -> str:
    """Run ``install`` offline, held to the versions of ``key``'s online install, when one ran at or
    after the cutoff; else online, and mark what it chose.

    The constraints file is written in ``scratch`` (a folder the install steps can read) and removed
    afterwards.  An online install marks its key once the install itself succeeded, even when the
    version check that follows fails: the cache then holds what that resolution chose either way.
    """
    versions = marks.versions(key, exclude_newer) if key is not None and exclude_newer is not None else None
    constraints: Path | None = None
    if versions is not None:
        scratch.mkdir(parents=True, exist_ok=True)
        constraints = scratch / CONSTRAINTS_NAME
        constraints.write_text("".join(f"{pin}\n" for pin in versions), encoding="utf-8")
    outputs: list[str] = []
    started = utc_now()

    def remember() -> None:
        chosen = installed_versions(outputs)
        if key is not None and constraints is None and chosen is not None:
            marks.mark(key, started, chosen)

    try:
        observed = install(constraints, outputs)
    except CaseError as error:
        if error.reason == "version_mismatch":
            remember()
        raise
    finally:
        if constraints is not None:
            constraints.unlink(missing_ok=True)
    remember()
    return observed


__all__ = [
    "CONSTRAINTS_NAME",
    "MARKS_DIR",
    "MARK_BYTES",
    "Install",
    "Marks",
    "command_material",
    "environment_key",
    "installed_versions",
    "reuse_install",
    "utc_now",
]
