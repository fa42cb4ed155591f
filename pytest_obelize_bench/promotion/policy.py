"""The promotion policy (``cases/promotion.yaml``): every threshold the decision reads, and its sha256.

The file is registered before the runs it judges: a session writes the sha256 of the policy in
force into its ``run.json`` when it starts, and the gate refuses a policy whose bytes differ from
what both runs registered. So a threshold is never chosen after the figures are known.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pytest_obelize_bench.promotion.metrics import MetricName

if TYPE_CHECKING:
    from pytest_obelize_bench.casefile.schema import Case

__all__ = [
    "POLICY_FILE_NAME",
    "Efficiency",
    "Policy",
    "PolicyError",
    "RowsRule",
    "load_policy",
    "policy_sha256_beside",
    "registration_fields",
]

#: The policy's file name, beside the case file.
POLICY_FILE_NAME = "promotion.yaml"


class PolicyError(ValueError):
    """A policy file that cannot be used: one line naming the file and the field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Efficiency(_Strict):
    """Runtime decides only at equal quality: per case the median over its attempts."""

    min_median_improvement_pct: float = Field(default=5.0, ge=0.0)
    max_case_regression_pct: float = Field(default=20.0, ge=0.0)
    max_ungated_case_regression_pct: float = Field(default=100.0, ge=0.0)


class RowsRule(_Strict):
    """Rows migrated decide only at equal resolution, and never from one row."""

    min_margin: float = Field(default=2.0, gt=0.0)
    max_case_regressions: int = Field(default=0, ge=0)


class Policy(_Strict):
    schema_version: Literal[2, 3] = 3
    #: The primary metric every per-case rule reads (``metrics.py``).
    metric: MetricName = "verified_success"
    secondary: Literal["rows_migrated"] = "rows_migrated"
    cost: Literal["runtime_seconds"] = "runtime_seconds"
    min_runs: int = Field(default=1, ge=1)
    min_n: int = Field(default=10, ge=1)
    alpha: float = Field(default=0.05, gt=0.0, lt=1.0)
    power: float = Field(default=0.8, gt=0.0, lt=1.0)
    resolution_margin: float = Field(default=2.0, gt=0.0)
    min_gated_share: float = Field(default=0.5, ge=0.0, le=1.0)
    efficiency: Efficiency = Efficiency()
    rows: RowsRule = RowsRule()
    max_evidence_age_days: int = Field(default=30, ge=0)
    require_holdout: bool = True


def load_policy(data: bytes, source: str) -> tuple[Policy, str]:
    """The policy in a file's bytes and the sha256 of exactly those bytes."""
    from pytest_obelize_bench._util.documents import parse_yaml
    from pytest_obelize_bench._util.safe_io import UntrustedFileError, decode_untrusted
    from pytest_obelize_bench._util.validation import problem_text

    digest = hashlib.sha256(data).hexdigest()
    try:
        parsed = parse_yaml(decode_untrusted(data, source), source)
    except UntrustedFileError as exc:
        raise PolicyError(str(exc).splitlines()[0]) from None
    if not isinstance(parsed, dict):
        raise PolicyError(f"{source}: expected a mapping of policy fields")
    try:
        return Policy.model_validate(parsed), digest
    except ValidationError as exc:
        raise PolicyError(f"{source}: field {problem_text(exc.errors()[0], '(top level)')}") from None


def policy_sha256_beside(cases_path: Path) -> str | None:
    """sha256 of the policy file beside a case file, as a run registers it; None without one.

    Read once at a run's start, bounded and never through a link: what the run registers is the
    policy that was in force when it began.
    """
    from pytest_obelize_bench._util.caps import POLICY_BYTES
    from pytest_obelize_bench._util.safe_io import UntrustedFileError, read_untrusted

    path = Path(cases_path).parent / POLICY_FILE_NAME
    try:
        return hashlib.sha256(read_untrusted(path, POLICY_BYTES)).hexdigest()
    except (UntrustedFileError, OSError):
        return None


def registration_fields(cases_path: Path, cases: Iterable[Case], repeat: int) -> dict[str, Any]:
    """What a run registers in ``run.json`` when it starts, for the promotion gate to compare.

    The policy in force, the case file's keys, the machine class and the attempts per case: a
    decision on the run uses exactly these, or refuses.
    """
    from pytest_obelize_bench.casefile.keys import keys_sha256
    from pytest_obelize_bench.records.runs import machine_class

    return {
        "promotion_policy_sha256": policy_sha256_beside(cases_path),
        "case_keys_sha256": keys_sha256(cases),
        "machine_class": machine_class(),
        "repeat": repeat,
    }
