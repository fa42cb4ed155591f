"""What of a run folder may be published, and copying it beside a round's records.

The graded documents are always kept; obelize's ``patch.diff`` quotes the repository, so it is
kept only when the repository's licence lets its code be republished.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from pytest_obelize_bench._util.caps import PATCH_BYTES
from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench._util.digests import sha256_bytes
from pytest_obelize_bench._util.safe_io import (
    NotRegular,
    TooLarge,
    UntrustedFileError,
    read_bounded,
    read_untrusted,
    write_atomically,
)
from pytest_obelize_bench._util.strict_model import committed_json
from pytest_obelize_bench.tool.run_documents import DOCUMENTS, MAX_DOCUMENT_BYTES, PATCH
from pytest_obelize_bench.tool.runfolder import open_run_folder

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
    fd = open_run_folder(Path(folder), "fix", Path(folder).name)
    try:
        for name in names:
            try:
                data = read_bounded(Path(name), MAX_DOCUMENT_BYTES, dir_fd=fd)
            except (OSError, TooLarge, NotRegular):
                continue
            write_atomically(dest / name, data)
            copied.append(name)
    finally:
        os.close(fd)
    return copied


def patch_digest(folder: Path) -> str | None:
    """sha256 of the run folder's patch.diff (read bounded, never through a link); None without one.

    The digest is recorded whatever the licence: it quotes nothing, and it is what a review of
    this patch is keyed by (``casefile/reviews.py``).
    """
    try:
        fd = open_run_folder(Path(folder), "fix", Path(folder).name)
    except CaseError:
        return None
    try:
        return sha256_bytes(read_bounded(Path(PATCH), MAX_DOCUMENT_BYTES, dir_fd=fd))
    except (OSError, TooLarge, NotRegular):
        return None
    finally:
        os.close(fd)


#: What a published tail of a suite's log holds at most: its last lines, and their last bytes.
TAIL_LINES = 60
TAIL_BYTES = 8 * 1024


def kept_patch(logs: Path) -> Path:
    """Where a case's logs keep the patch obelize wrote (copied out of its run folder)."""
    return logs / "artefacts" / PATCH


def published_beside(
    logs: Path, license: str | None, steps: Sequence[str], public: Callable[[str], str]
) -> dict[str, str] | None:
    """What a round publishes beside a case's record, by suffix: the patch the logs kept
    (``.diff``) and the tails of the suites' logs (``.tails.json``), only under a licence that lets
    them be published (a log quotes the repository too); bytes that are not UTF-8 read as U+FFFD.
    ``steps`` are the record's step names in order (``NN-<name>.log``); ``public`` labels the
    machine's paths and names and hides its secrets in a tail (``isolation/public_text.py``), whose
    command line (``$ ...``) is left out."""
    if not patch_publishable(license):
        return None
    beside: dict[str, str] = {}
    try:
        patch = kept_patch(logs)
        if patch.is_file():
            beside[".diff"] = read_untrusted(patch, PATCH_BYTES).decode("utf-8", errors="replace")
    except UntrustedFileError:
        pass  # over 1 MiB, or not a plain file: the page says it was not published
    tails = {name: _tail(logs / f"{index:02d}-{name}.log", public) for index, name in enumerate(steps, start=1)
             if name in ("baseline", "after")}  # fmt: skip
    if any(tails.values()):
        beside[".tails.json"] = committed_json(tails)
    return beside or None


def _tail(log: Path, public: Callable[[str], str]) -> str | None:
    """The last ``TAIL_LINES`` lines of a step's output, at most ``TAIL_BYTES``, made ``public``;
    None without a log."""
    if not log.is_file() or log.is_symlink():
        return None
    with open(log, "rb") as stream:
        size = stream.seek(0, os.SEEK_END)
        stream.seek(max(0, size - TAIL_BYTES))
        data = stream.read(TAIL_BYTES)
    lines = data.decode("utf-8", errors="replace").splitlines()
    if size > TAIL_BYTES:
        lines = lines[1:]  # the first one is cut
    lines = [line for line in lines if not line.startswith("$ ")]  # the command: the harness's paths
    return public("\n".join(lines[-TAIL_LINES:]))
