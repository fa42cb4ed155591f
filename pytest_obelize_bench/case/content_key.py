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

import json
from collections.abc import Mapping

from pytest_obelize_bench import __version__
from pytest_obelize_bench._util.digests import sha256_text
from pytest_obelize_bench.casefile.schema import Case
from pytest_obelize_bench.isolation.gitquery import HarnessInfo
from pytest_obelize_bench.tool.info import ToolInfo
from pytest_obelize_bench.tool.packs import PackInfo

KEY_VERSION = 1


def case_row_hash(case: Case) -> str:
    """sha256 of the case as the harness reads it (its row, normalised to JSON)."""
    text = json.dumps(case.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return sha256_text(text)


def content_key(
    case: Case,
    *,
    tool: ToolInfo | None,
    packs: Mapping[str, PackInfo],
    interpreter_used: str | None,
    exclude_newer: str | None,
    sandbox: str,
    harness: HarnessInfo,
    attempt: int,
) -> str:
    """The case's content key (see the module docstring for what it covers)."""
    pack = packs.get(case.pack)
    parts = {
        "key_version": KEY_VERSION,
        "case": case_row_hash(case),
        "tool": [None, None, None] if tool is None else [tool.version, tool.commit, tool.tree_dirty],
        "pack_sha256": None if pack is None else pack.pack_sha256,
        "interpreter": interpreter_used,
        "exclude_newer": exclude_newer,
        "sandbox": sandbox,
        "harness": [harness.version or __version__, harness.commit, harness.tree_dirty],
        "attempt": attempt,
    }
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    return sha256_text(text)


__all__ = ["KEY_VERSION", "case_row_hash", "content_key"]
