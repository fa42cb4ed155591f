"""Locating obelize's run folder and reading its documents, as untrusted input.

The repository under test and the tool both run arbitrary code before the harness reads the run
folder, so everything here is read as hostile: found only through obelize's own pointer
(``.obelize/latest``), every file opened without following a symlink and read with a size cap
(``safe_io``), parsed as JSON and checked against the documents' models (``run_documents``), and
every written path required to stay inside the checkout.  Each surprise is a ``CaseError``
(``no_run_folder`` when there is no folder to read, ``run_folder_unreadable`` when there is one
and it cannot be trusted), never a crash of the round.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pytest_obelize_bench._util.caps import POINTER_BYTES
from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench._util.safe_io import (
    EntryKind,
    NotRegular,
    TooLarge,
    UntrustedFileError,
    entry_kind,
    open_directory,
    parse_json,
    read_bounded,
    read_untrusted_text,
)
from pytest_obelize_bench.grading.graded_facts import (
    Artefacts,
)
from pytest_obelize_bench.tool.run_documents import (
    DOCUMENTS,
    MAX_DOCUMENT_BYTES,
    RUN_ID,
    DocumentError,
    FindingsDocument,
    PlanDocument,
    RunDocument,
    artefacts,
    parse_document,
)

# Re-exported: the graded facts, the path rule and the bounded reads were imported from here
# before they had modules of their own.
__all__ = [
    "MAX_POINTER_BYTES",
    "Artefacts",
    "load_artefacts_dir",
    "locate_run_folder",
    "open_run_folder",
    "read_artefacts",
    "read_run_document",
]

#: Largest ``.obelize/latest`` read: one run id and a newline.
MAX_POINTER_BYTES = POINTER_BYTES
_STEP = "fix"


# -- locating -------------------------------------------------------------------------------


def _no_folder(detail: str) -> CaseError:
    return CaseError(_STEP, "no_run_folder", detail)


def _kind(path: Path, shown: str) -> EntryKind:
    try:
        kind = entry_kind(path)
    except OSError as error:
        raise _no_folder(f"{shown} cannot be inspected: {error.strerror}") from None
    if kind == "missing":
        raise _no_folder(f"obelize wrote no run folder: {shown} does not exist")
    return kind


def _real_directory(path: Path, shown: str) -> None:
    """``path`` must exist as a directory that is not a symlink."""
    kind = _kind(path, shown)
    if kind == "symlink":
        raise _no_folder(f"{shown} is a symlink; the harness does not follow links out of a run")
    if kind != "directory":
        raise _no_folder(f"{shown} is not a directory")


def _read_pointer(path: Path) -> str:
    """The bytes of ``.obelize/latest``: a regular file, not a symlink, at most a few KB."""
    shown = ".obelize/latest"
    kind = _kind(path, shown)
    if kind == "symlink":
        raise _no_folder(f"{shown} is a symlink, not the pointer file obelize writes")
    if kind != "file":
        raise _no_folder(f"{shown} is not a regular file")
    try:
        data = read_bounded(path, MAX_POINTER_BYTES)
    except TooLarge:
        raise _no_folder(f"{shown} is larger than {MAX_POINTER_BYTES} bytes; it should hold one run id") from None
    except NotRegular as problem:
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
    if not RUN_ID.fullmatch(run_id) or run_id in {".", ".."}:
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


# -- reading ----------------------------------------------------------------------------------


def open_run_folder(folder: Path, step: str, shown: str) -> int:
    """A descriptor of the run folder, for reading its documents by name without following links."""
    try:
        return open_directory(folder)
    except NotRegular as problem:
        raise CaseError(step, "run_folder_unreadable", f"{shown} {problem}") from None
    except OSError as error:
        detail = f"{shown} cannot be opened: {error.strerror or error}"
        raise CaseError(step, "run_folder_unreadable", detail) from None


def _load(dir_fd: int, document: str, step: str, shown: str) -> Any:
    """One document of the open folder as parsed JSON; any problem is a CaseError naming it."""
    try:
        return parse_json(read_untrusted_text(Path(document), MAX_DOCUMENT_BYTES, dir_fd), document)
    except UntrustedFileError as error:
        raise CaseError(step, "run_folder_unreadable", f"{shown}/{document}: {error.problem}") from None


def _inside_checkout(run: RunDocument, folder: Path, checkout: Path) -> None:
    """What the models cannot check without the checkout: the run id names this folder, and every
    written file (the compile step opens them) resolves inside the checkout."""
    if run.run_id is not None and run.run_id != folder.name:
        raise DocumentError("run.json", f"run_id {run.run_id[:80]!r} is not the folder's name")
    root = checkout.resolve()
    for index, row in enumerate(run.file_edits):
        try:
            problem = None if (checkout / row.path).resolve().is_relative_to(root) else "resolves outside the checkout"
        except (OSError, RuntimeError):  # a symlink loop
            problem = "cannot be resolved"
        if problem is not None:
            raise DocumentError("run.json", f"file_edits[{index}].path {row.path[:200]!r} {problem}")


def _read_folder(folder: Path, checkout: Path | None, step: str, shown: str) -> Artefacts:
    fd = open_run_folder(folder, step, shown)
    try:
        raw = {document: _load(fd, document, step, shown) for document in DOCUMENTS}
    finally:
        os.close(fd)
    try:
        findings = parse_document(FindingsDocument, "findings.json", raw["findings.json"])
        plan = parse_document(PlanDocument, "plan.json", raw["plan.json"])
        run = parse_document(RunDocument, "run.json", raw["run.json"])
        if checkout is not None:
            _inside_checkout(run, folder, checkout)
    except DocumentError as error:
        raise CaseError(step, "run_folder_unreadable", f"{shown}/{error}") from None
    return artefacts(findings, plan, run)


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


def read_run_document(folder: Path, name: str, step: str) -> Any:
    """One JSON document of a run folder, read as untrusted (bounded, no symlink, UTF-8 JSON).

    Every problem is ``CaseError(step, "run_folder_unreadable", ...)`` naming the document.
    """
    folder = Path(folder)
    fd = open_run_folder(folder, step, folder.name)
    try:
        return _load(fd, name, step, folder.name)
    finally:
        os.close(fd)
