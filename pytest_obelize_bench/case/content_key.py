"""The content key of a case's run: everything that decides what its record can say.

Two runs with the same key measured the same thing, so ``--bench-resume`` keeps a finished record
whose key equals the one the case would run under now.  The key is a sha256 over, as JSON:

* ``case``: the case row as the harness reads it (repository, commit, pins, install commands,
  suite command, ground truth, review);
* ``tool``: obelize's version, commit and dirty flag; ``pack_sha256`` of the case's pack;
* ``interpreter``: the uv key of the interpreter the case's venv runs;
* ``exclude_newer``, ``sandbox`` (the record's label), ``harness`` (version and commit) and the
  ``attempt`` number.

Pure: the worker computes it from what it ran (``pipeline.build_record``), the controller from
what a case would run under (``resume.py``); both call ``content_key`` with the same parts.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from pytest_obelize_bench.casefile.schema import Case

KEY_VERSION = 1


def case_row_hash(case: Case) -> str:
    """sha256 of the case as the harness reads it (its row, normalised to JSON)."""
    text = json.dumps(case.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def content_key(
    case: Case,
    *,
    tool: Mapping[str, Any] | None,
    packs: Mapping[str, Mapping[str, Any]],
    interpreter_used: str | None,
    exclude_newer: str | None,
    sandbox: str,
    harness: Mapping[str, Any],
    harness_version: str,
    attempt: int,
) -> str:
    """The case's content key (see the module docstring for what it covers)."""
    tool = tool or {}
    parts = {
        "key_version": KEY_VERSION,
        "case": case_row_hash(case),
        "tool": [tool.get("version"), tool.get("commit"), tool.get("tree_dirty")],
        "pack_sha256": (packs.get(case.pack) or {}).get("pack_sha256"),
        "interpreter": interpreter_used,
        "exclude_newer": exclude_newer,
        "sandbox": sandbox,
        "harness": [harness.get("version", harness_version), harness.get("commit"), harness.get("tree_dirty")],
        "attempt": attempt,
    }
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


__all__ = ["KEY_VERSION", "case_row_hash", "content_key"]
