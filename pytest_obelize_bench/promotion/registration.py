"""A run registers the promotion policy in force when it starts, so thresholds come before figures.

A session writes the sha256 of the policy (``casefile/promotion_policy``) into its
``run.json`` when it starts, and the gate refuses a policy whose bytes differ from what both
runs registered. So a threshold is never chosen after the figures are known.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_obelize_bench._util.caps import POLICY_BYTES
from pytest_obelize_bench._util.digests import sha256_bytes
from pytest_obelize_bench._util.safe_io import UntrustedFileError, read_untrusted
from pytest_obelize_bench.casefile.keys_digest import keys_sha256
from pytest_obelize_bench.casefile.promotion_policy import POLICY_FILE_NAME
from pytest_obelize_bench.records.runs import machine_class

if TYPE_CHECKING:
    from pytest_obelize_bench.casefile.schema import Case

__all__ = ["policy_sha256_beside", "registration_fields"]


def policy_sha256_beside(cases_path: Path) -> str | None:
    """sha256 of the policy file beside a case file, as a run registers it; None without one.

    Read once at a run's start, bounded and never through a link: what the run registers is the
    policy that was in force when it began.
    """
    path = Path(cases_path).parent / POLICY_FILE_NAME
    try:
        return sha256_bytes(read_untrusted(path, POLICY_BYTES))
    except (UntrustedFileError, OSError):
        return None


def registration_fields(cases_path: Path, cases: Iterable[Case], repeat: int) -> dict[str, Any]:
    """What a run registers in ``run.json`` when it starts, for the promotion gate to compare.

    The policy in force, the case file's keys, the machine class and the attempts per case: a
    decision on the run uses exactly these, or refuses.
    """
    return {
        "promotion_policy_sha256": policy_sha256_beside(cases_path),
        "case_keys_sha256": keys_sha256(cases),
        "machine_class": machine_class(),
        "repeat": repeat,
    }
