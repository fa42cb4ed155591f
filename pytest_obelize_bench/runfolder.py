"""Reading what obelize wrote into its run folder, as untrusted input.

The repository under test and the tool both run arbitrary code before the harness reads the run
folder, so everything here is read as hostile: found only through obelize's own pointer
(``.obelize/latest``), every file opened without following a symlink, read with a size cap,
parsed as JSON and checked for the shape the harness relies on, and every path in it required to
stay inside the checkout.  Each surprise is a ``CaseError`` (``no_run_folder`` when there is no
folder to read, ``run_folder_unreadable`` when there is one and it cannot be trusted), never a
crash of the round.

Only the fields grading needs are read; anything else the documents carry is ignored, so the
reader works across obelize releases (0.1.0 writes ``pack`` where 0.8.0 writes ``packs[]``).
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_obelize_bench.errors import CaseError

#: Largest run-folder document read (findings.json of a big repository is a few MB).
MAX_DOCUMENT_BYTES = 20 * 1024 * 1024
#: Largest ``.obelize/latest`` read: one run id and a newline.
MAX_POINTER_BYTES = 4096
#: The documents grading reads, and the one copied only when the licence lets it be published.
DOCUMENTS: tuple[str, ...] = ("findings.json", "plan.json", "run.json")
PATCH = "patch.diff"

#: A run id is used as one path component: no separator, no dot-only name, nothing hidden.
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_STEP = "fix"


@dataclass(frozen=True)
class Finding:
    """A scan-time row of findings.json (``symbol`` is null only for a parse_error)."""

    path: str
    line: int
    kind: str
    symbol: str | None
    scan_status: str
    bail: str | None
    #: Why the scan resolved (or could not resolve) the symbol; null in graded facts of version 1.
    confidence_reason: str | None = None


@dataclass(frozen=True)
class PlanEdit:
    """A row of plan.json ``edits[]``: what the rules produced, written or not."""

    path: str
    line: int
    status: str
    rule_id: str | None
    reason: str | None


@dataclass(frozen=True)
class Withheld:
    """A row of run.json ``withheld[]``: a fix-time row the run refused, and why."""

    path: str
    line: int
    symbol: str | None
    bail: str
    #: The bails that kept the file back (``file_not_fully_migrated`` rows only); null otherwise
    #: and in graded facts of version 1.
    caused_by: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Artefacts:
    """What grading needs from one obelize run folder.

    ``written`` is run.json ``file_edits[].path`` (what was really written), ``refused`` the codes
    of run.json ``refused[]`` (``tree_dirty`` means the whole apply was refused).  ``model_used``
    is whether run.json names a model that was consulted; the token and cost fields are null when
    the folder says nothing (obelize 0.8.0 has no cost field at all).
    """

    findings: tuple[Finding, ...]
    edits: tuple[PlanEdit, ...]
    written: tuple[str, ...]
    withheld: tuple[Withheld, ...]
    exit_code: int | None
    model_used: bool
    llm_tokens_in: int | None
    llm_tokens_out: int | None
    llm_cost_usd: float | None
    refused: tuple[str, ...] = ()
    #: run.json ``run_id``; null when the folder does not say (and in graded facts of version 1).
    run_id: str | None = None


# -- locating -------------------------------------------------------------------------------


def _no_folder(detail: str) -> CaseError:
    return CaseError(_STEP, "no_run_folder", detail)


def _real_directory(path: Path, shown: str) -> None:
    """``path`` must exist as a directory that is not a symlink."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise _no_folder(f"obelize wrote no run folder: {shown} does not exist") from None
    except OSError as error:
        raise _no_folder(f"{shown} cannot be inspected: {error.strerror}") from None
    if stat.S_ISLNK(info.st_mode):
        raise _no_folder(f"{shown} is a symlink; the harness does not follow links out of a run")
    if not stat.S_ISDIR(info.st_mode):
        raise _no_folder(f"{shown} is not a directory")


def _read_pointer(path: Path) -> str:
    """The bytes of ``.obelize/latest``: a regular file, not a symlink, at most a few KB."""
    shown = ".obelize/latest"
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise _no_folder(f"obelize wrote no run folder: {shown} does not exist") from None
    except OSError as error:
        raise _no_folder(f"{shown} cannot be inspected: {error.strerror}") from None
    if stat.S_ISLNK(info.st_mode):
        raise _no_folder(f"{shown} is a symlink, not the pointer file obelize writes")
    if not stat.S_ISREG(info.st_mode):
        raise _no_folder(f"{shown} is not a regular file")
    try:
        data = _read_bounded(path, MAX_POINTER_BYTES)
    except _TooLarge:
        raise _no_folder(f"{shown} is larger than {MAX_POINTER_BYTES} bytes; it should hold one run id") from None
    except _NotRegular as problem:
        raise _no_folder(f"{shown} {problem}") from None
    except OSError as error:
        raise _no_folder(f"{shown} cannot be read: {error.strerror or error}") from None
    try:
        return data.decode("ascii").strip()
    except UnicodeDecodeError:
        raise _no_folder(f"{shown} does not hold a run id (not ASCII)") from None


def locate_run_folder(checkout: Path) -> Path:
    """The run folder ``.obelize/latest`` names, after checking it cannot lead out of ``checkout``.

    Raises ``CaseError("fix", "no_run_folder", ...)`` when there is no pointer, the pointer is not
    a plain file holding one safe run id, or the folder it names is missing, a symlink, or not
    inside the checkout once resolved.  Details name paths relative to the checkout.
    """
    checkout = Path(checkout)
    home = checkout / ".obelize"
    _real_directory(home, ".obelize")
    run_id = _read_pointer(home / "latest")
    if not run_id:
        raise _no_folder(".obelize/latest is empty; it should hold a run id")
    if not _RUN_ID.fullmatch(run_id) or run_id in {".", ".."}:
        raise _no_folder(f".obelize/latest holds {run_id[:80]!r}, which is not a run id (one plain path component)")
    _real_directory(home / "runs", ".obelize/runs")
    folder = home / "runs" / run_id
    shown = f".obelize/runs/{run_id}"
    _real_directory(folder, shown)
    try:
        inside = folder.resolve(strict=True).is_relative_to(checkout.resolve(strict=True))
    except OSError as error:
        raise _no_folder(f"{shown} cannot be resolved: {error.strerror or error}") from None
    if not inside:
        raise _no_folder(f"{shown} resolves outside the checkout")
    return folder


# -- bounded reads --------------------------------------------------------------------------


class _TooLarge(Exception):
    pass


class _NotRegular(Exception):
    pass


def _open_no_follow(name: str | os.PathLike[str], dir_fd: int | None = None) -> int:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    flags |= getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _NotRegular("is a symlink") from None
        raise


def _read_fd(fd: int, cap: int) -> bytes:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise _NotRegular("is not a regular file")
    if info.st_size > cap:
        raise _TooLarge(info.st_size)
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = os.read(fd, min(1 << 20, cap + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total > cap:  # grew while being read
            raise _TooLarge(total)
    return b"".join(chunks)


def _read_bounded(path: Path, cap: int, dir_fd: int | None = None) -> bytes:
    """Read a regular file (never through a symlink) of at most ``cap`` bytes."""
    fd = _open_no_follow(path if dir_fd is None else path.name, dir_fd)
    try:
        return _read_fd(fd, cap)
    finally:
        os.close(fd)


class UntrustedFileError(ValueError):
    """A file read as untrusted evidence that is missing, a symlink, not regular or too large."""


def read_untrusted(path: Path, cap: int) -> bytes:
    """The bounded, symlink-refusing read above, for other untrusted evidence (records, runs).

    Every problem is one ``UntrustedFileError`` whose message names the file.
    """
    try:
        return _read_bounded(Path(path), cap)
    except FileNotFoundError:
        raise UntrustedFileError(f"{path}: missing") from None
    except _TooLarge as size:
        raise UntrustedFileError(f"{path}: larger than the {cap} byte cap ({size} bytes)") from None
    except _NotRegular as problem:
        raise UntrustedFileError(f"{path} {problem}; refused") from None
    except OSError as error:
        raise UntrustedFileError(f"{path}: cannot be read: {error.strerror or error}") from None


def _open_folder(folder: Path, step: str, shown: str) -> int:
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        return os.open(folder, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            problem = "is a symlink or not a directory"
        else:
            problem = f"cannot be opened: {error.strerror or error}"
        raise CaseError(step, "run_folder_unreadable", f"{shown} {problem}") from None


# -- documents ------------------------------------------------------------------------------


class _Reader:
    """Reads the three documents of one folder and turns every problem into one CaseError."""

    def __init__(self, folder: Path, checkout: Path | None, step: str, shown: str) -> None:
        self.folder = folder
        self.checkout = checkout
        self.step = step
        self.shown = shown
        self.checkout_resolved = None if checkout is None else checkout.resolve()

    def fail(self, document: str, problem: str) -> CaseError:
        return CaseError(self.step, "run_folder_unreadable", f"{self.shown}/{document}: {problem}")

    def load(self, dir_fd: int, document: str) -> Any:
        try:
            data = _read_bounded(Path(document), MAX_DOCUMENT_BYTES, dir_fd=dir_fd)
        except FileNotFoundError:
            raise self.fail(document, "missing") from None
        except _TooLarge as size:
            raise self.fail(document, f"larger than the {MAX_DOCUMENT_BYTES} byte cap ({size} bytes)") from None
        except _NotRegular as problem:
            raise self.fail(document, str(problem)) from None
        except OSError as error:
            raise self.fail(document, f"cannot be read: {error.strerror or error}") from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise self.fail(document, f"not UTF-8 (byte {error.start})") from None
        try:
            return json.loads(text)
        except (ValueError, RecursionError) as error:
            raise self.fail(document, f"not JSON: {str(error)[:200]}") from None

    # field checks -----------------------------------------------------------------------

    def mapping(self, value: Any, document: str, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(document, f"{where}: expected an object, got {_kind(value)}")
        return value

    def rows(self, data: dict[str, Any], key: str, document: str) -> list[dict[str, Any]]:
        if key not in data:
            raise self.fail(document, f"{key}: missing")
        value = data[key]
        if not isinstance(value, list):
            raise self.fail(document, f"{key}: expected a list, got {_kind(value)}")
        return [self.mapping(row, document, f"{key}[{index}]") for index, row in enumerate(value)]

    def string(self, row: dict[str, Any], field: str, document: str, where: str, *, null: bool = False) -> Any:
        value = row.get(field)
        if value is None and null:
            return None
        if not isinstance(value, str):
            raise self.fail(document, f"{where}.{field}: expected a string, got {_kind(value)}")
        return value

    def line(self, row: dict[str, Any], document: str, where: str) -> int:
        value = row.get("line")
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise self.fail(document, f"{where}.line: expected an integer >= 1, got {_kind(value)}")
        return value

    def path(self, row: dict[str, Any], document: str, where: str, *, opened: bool = False) -> str:
        value = self.string(row, "path", document, where)
        problem = path_problem(value)
        if problem is None and opened and self.checkout is not None and self.checkout_resolved is not None:
            # A file the harness will open (compile step): its resolved path must stay inside.
            try:
                if not (self.checkout / value).resolve().is_relative_to(self.checkout_resolved):
                    problem = "resolves outside the checkout"
            except (OSError, RuntimeError):  # a symlink loop
                problem = "cannot be resolved"
        if problem is not None:
            raise self.fail(document, f"{where}.path {value[:200]!r} {problem}")
        return str(value)

    # documents --------------------------------------------------------------------------

    def findings(self, data: Any) -> tuple[Finding, ...]:
        document = "findings.json"
        data = self.mapping(data, document, "top level")
        found = []
        for index, row in enumerate(self.rows(data, "findings", document)):
            where = f"findings[{index}]"
            found.append(
                Finding(
                    path=self.path(row, document, where),
                    line=self.line(row, document, where),
                    kind=self.string(row, "kind", document, where),
                    symbol=self.string(row, "symbol", document, where, null=True),
                    scan_status=self.string(row, "scan_status", document, where),
                    bail=self.string(row, "bail", document, where, null=True),
                    confidence_reason=self.string(row, "confidence_reason", document, where, null=True),
                )
            )
        return tuple(found)

    def plan(self, data: Any) -> tuple[PlanEdit, ...]:
        document = "plan.json"
        data = self.mapping(data, document, "top level")
        edits = []
        for index, row in enumerate(self.rows(data, "edits", document)):
            where = f"edits[{index}]"
            edits.append(
                PlanEdit(
                    path=self.path(row, document, where),
                    line=self.line(row, document, where),
                    status=self.string(row, "status", document, where),
                    rule_id=self.string(row, "rule_id", document, where, null=True),
                    reason=self.string(row, "reason", document, where, null=True),
                )
            )
        return tuple(edits)

    def run(self, data: Any) -> dict[str, Any]:
        document = "run.json"
        data = self.mapping(data, document, "top level")
        run_id = data.get("run_id")
        if run_id is not None and self.checkout is not None and run_id != self.folder.name:
            raise self.fail(document, f"run_id {str(run_id)[:80]!r} is not the folder's name")
        if run_id is not None and (not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id)):
            raise self.fail(document, f"run_id: expected a run id, got {_kind(run_id)}")
        written = tuple(
            self.path(row, document, f"file_edits[{index}]", opened=True)
            for index, row in enumerate(self.rows(data, "file_edits", document))
        )
        withheld = []
        for index, row in enumerate(self.rows(data, "withheld", document)):
            where = f"withheld[{index}]"
            withheld.append(
                Withheld(
                    path=self.path(row, document, where),
                    line=self.line(row, document, where),
                    symbol=self.string(row, "symbol", document, where, null=True),
                    bail=self.string(row, "bail", document, where),
                    caused_by=self.codes(row, "caused_by", document, where),
                )
            )
        refused = ()
        if data.get("refused") is not None:
            refused = tuple(
                self.string(row, "code", document, f"refused[{index}]")
                for index, row in enumerate(self.rows(data, "refused", document))
            )
        exit_code = data.get("exit_code")
        if exit_code is not None and (isinstance(exit_code, bool) or not isinstance(exit_code, int)):
            raise self.fail(document, f"exit_code: expected an integer, got {_kind(exit_code)}")
        model = data.get("model")
        if model is not None:
            model = self.mapping(model, document, "model")
        used = model is not None and model.get("provider") not in (None, "none")
        return {
            "run_id": run_id,
            "written": written,
            "withheld": tuple(withheld),
            "refused": refused,
            "exit_code": exit_code,
            "model_used": used,
            "tokens_in": self.count(model, "tokens_in", document) if used else None,
            "tokens_out": self.count(model, "tokens_out", document) if used else None,
            "cost": self.cost(model, document) if used else None,
        }

    def codes(self, row: dict[str, Any], field: str, document: str, where: str) -> tuple[str, ...] | None:
        value = row.get(field)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(code, str) for code in value):
            raise self.fail(document, f"{where}.{field}: expected a list of codes, got {_kind(value)}")
        return tuple(value)

    def count(self, model: dict[str, Any] | None, field: str, document: str) -> int | None:
        value = None if model is None else model.get(field)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.fail(document, f"model.{field}: expected a count, got {_kind(value)}")
        return value

    def cost(self, model: dict[str, Any] | None, document: str) -> float | None:
        value = None if model is None else model.get("cost_usd")
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise self.fail(document, f"model.cost_usd: expected a non-negative number, got {_kind(value)}")
        return float(value)


def _kind(value: Any) -> str:
    """A short description of an unexpected JSON value, for an error detail."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value[:60]!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


def path_problem(path: str) -> str | None:
    """Why a path from a run folder cannot name a file inside the checkout, or None.

    Paths are repository-relative with ``/``; an absolute one, a Windows drive or UNC path, a
    ``..`` component (in either separator), an empty one, or one with a NUL byte is refused.
    """
    if not path:
        return "is empty"
    if "\x00" in path:
        return "contains a NUL byte"
    if path.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", path):
        return "is absolute"
    if ".." in re.split(r"[/\\]", path):
        return "leaves the checkout ('..')"
    return None


def _read_folder(folder: Path, checkout: Path | None, step: str, shown: str) -> Artefacts:
    reader = _Reader(folder, checkout, step, shown)
    fd = _open_folder(folder, step, shown)
    try:
        raw = {document: reader.load(fd, document) for document in DOCUMENTS}
    finally:
        os.close(fd)
    findings = reader.findings(raw["findings.json"])
    edits = reader.plan(raw["plan.json"])
    run = reader.run(raw["run.json"])
    model_used = run["model_used"]
    return Artefacts(
        findings=findings,
        edits=edits,
        written=run["written"],
        withheld=run["withheld"],
        exit_code=run["exit_code"],
        model_used=model_used,
        llm_tokens_in=run["tokens_in"],
        llm_tokens_out=run["tokens_out"],
        llm_cost_usd=run["cost"],
        refused=run["refused"],
        run_id=run["run_id"],
    )


def read_artefacts(folder: Path, checkout: Path) -> Artefacts:
    """Read findings.json, plan.json and run.json of a run folder inside ``checkout``.

    Raises ``CaseError("fix", "run_folder_unreadable", ...)`` naming the document and the problem:
    a missing, symlinked, oversized, non-UTF-8 or non-JSON document, a wrong shape, or a path
    that is absolute or leaves the checkout (a written file's path must also resolve inside it).
    """
    folder, checkout = Path(folder), Path(checkout)
    try:
        shown = folder.relative_to(checkout).as_posix()
    except ValueError:
        shown = folder.name
    return _read_folder(folder, checkout, _STEP, shown)


def load_artefacts_dir(dest: Path) -> Artefacts:
    """Read back the documents ``copy_artefacts`` stored, to re-grade without running anything.

    The same checks as ``read_artefacts`` except the ones that need the checkout (which is gone):
    paths are checked lexically only.  Errors are ``CaseError("regrade", "run_folder_unreadable")``.
    """
    dest = Path(dest)
    return _read_folder(dest, None, "regrade", dest.name)


# -- copying --------------------------------------------------------------------------------


def copy_artefacts(folder: Path, dest: Path, *, publish_patch: bool) -> list[str]:
    """Copy the graded documents (and patch.diff when ``publish_patch``) from ``folder`` to ``dest``.

    Only regular files (never through a symlink) within ``MAX_DOCUMENT_BYTES`` are copied; each is
    written beside its name and renamed, so ``dest`` never holds half a file.  Returns the names
    copied, in order; a file that is missing or fails a check is skipped, not copied.
    """
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    names = [*DOCUMENTS, *([PATCH] if publish_patch else [])]
    copied: list[str] = []
    fd = _open_folder(Path(folder), _STEP, Path(folder).name)
    try:
        for name in names:
            try:
                data = _read_bounded(Path(name), MAX_DOCUMENT_BYTES, dir_fd=fd)
            except (OSError, _TooLarge, _NotRegular):
                continue
            target = dest / name
            temporary = dest / f".{name}.partial"
            temporary.unlink(missing_ok=True)
            with open(temporary, "xb") as handle:
                handle.write(data)
            os.replace(temporary, target)
            copied.append(name)
    finally:
        os.close(fd)
    return copied


# -- publication ----------------------------------------------------------------------------

_PERMISSIVE = re.compile(r"MIT|BSD-[0-9]+-Clause|Apache-2\.0|ISC", re.IGNORECASE)


def patch_publishable(license: str | None) -> bool:
    """Whether a repository's patch.diff may be published: MIT, BSD-n-Clause, Apache-2.0 or ISC.

    ``license`` is an SPDX identifier.  A flat ``A OR B`` expression is publishable when one
    alternative is, ``A AND B`` only when all are; anything else (null, ``none``, NOASSERTION,
    a copyleft id, parentheses, ``WITH``) is not.
    """
    if license is None:
        return False
    text = license.strip()
    if not text or "(" in text or ")" in text or re.search(r"\bWITH\b", text):
        return False
    if re.search(r"\s", text):
        ors = re.split(r"\s+OR\s+", text)
        if len(ors) > 1:
            return any(patch_publishable(part) for part in ors)
        ands = re.split(r"\s+AND\s+", text)
        if len(ands) > 1:
            return all(patch_publishable(part) for part in ands)
        return False
    return _PERMISSIVE.fullmatch(text) is not None


# -- the graded facts, stored beside a round's records -----------------------------------------

#: Stored with the records so a round can be re-graded after its run folders are gone. Only
#: positions, kinds, symbols and statuses: never ``evidence``, which can quote the repository.
#: Version 2 adds what the error analysis needs (``run_id``, each finding's
#: ``confidence_reason``, each withheld row's ``caused_by``); version 1 files still load, with
#: those fields null.
GRADED_FACTS_VERSION = 2
READABLE_GRADED_FACTS_VERSIONS = (1, 2)


def artefacts_to_json(artefacts: Artefacts) -> str:
    data = dataclasses.asdict(artefacts)
    data["graded_facts_version"] = GRADED_FACTS_VERSION
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def artefacts_from_json(text: str, source: str = "<artefacts>") -> Artefacts:
    """Read what ``artefacts_to_json`` wrote; a ValueError names the file and the problem."""
    try:
        data = json.loads(text)
        version = data.pop("graded_facts_version", None)
        if version not in READABLE_GRADED_FACTS_VERSIONS:
            raise ValueError(f"graded_facts_version {version!r} is not one of {READABLE_GRADED_FACTS_VERSIONS}")
        withheld = []
        for row in data["withheld"]:
            caused_by = row.pop("caused_by", None)
            withheld.append(Withheld(**row, caused_by=None if caused_by is None else tuple(caused_by)))
        return Artefacts(
            findings=tuple(Finding(**row) for row in data["findings"]),
            edits=tuple(PlanEdit(**row) for row in data["edits"]),
            written=tuple(data["written"]),
            withheld=tuple(withheld),
            exit_code=data["exit_code"],
            model_used=data["model_used"],
            llm_tokens_in=data["llm_tokens_in"],
            llm_tokens_out=data["llm_tokens_out"],
            llm_cost_usd=data["llm_cost_usd"],
            refused=tuple(data.get("refused", ())),
            run_id=data.get("run_id"),
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"{source}: not a graded-facts document: {exc}") from None


# -- public bounded reads, for the other measurements (Gate 1 scans, fix dry runs) -------------


def read_bounded_file(path: Path, cap: int) -> bytes:
    """A regular file of at most ``cap`` bytes, never read through a symlink.

    Raises ``ValueError`` with a short reason (a symlink, not a regular file, too large) or
    ``OSError`` when it cannot be opened.
    """
    try:
        return _read_bounded(Path(path), cap)
    except _TooLarge as size:
        raise ValueError(f"larger than the {cap} byte cap ({size} bytes)") from None
    except _NotRegular as problem:
        raise ValueError(str(problem)) from None


def read_run_document(folder: Path, name: str, step: str) -> Any:
    """One JSON document of a run folder, read as untrusted (bounded, no symlink, UTF-8 JSON).

    Every problem is ``CaseError(step, "run_folder_unreadable", ...)`` naming the document.
    """
    folder = Path(folder)
    reader = _Reader(folder, None, step, folder.name)
    fd = _open_folder(folder, step, folder.name)
    try:
        return reader.load(fd, name)
    finally:
        os.close(fd)
