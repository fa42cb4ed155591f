"""One digest of a case file's keys, so two runs can show they were graded against the same truth."""

from __future__ import annotations

import json
from collections.abc import Iterable

from pytest_obelize_bench._util.digests import sha256_text
from pytest_obelize_bench.casefile.schema import Case

__all__ = ["keys_sha256"]


def keys_sha256(cases: Iterable[Case]) -> str:
    """sha256 over every case's id, control flag and ground truth, in id order (JSON, sorted keys).

    A run records it at its start; the promotion gate compares the two runs' digests and the case
    file's now, because a tier recomputed against another key is another measurement.
    """
    rows = [
        {"id": case.id, "control": case.control, "ground_truth": case.ground_truth.model_dump(mode="json")}
        for case in sorted(cases, key=lambda case: case.id)
    ]
    return sha256_text(json.dumps(rows, sort_keys=True, separators=(",", ":")))
