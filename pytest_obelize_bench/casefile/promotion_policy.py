"""The promotion policy (``cases/promotion.yaml``): every threshold a decision reads.

The policy is an input file beside the case file, read and validated like it; the gate, and any
command that tells two sides apart (``compare``, the comparison arm's block), reads its alpha
and min_n from here, so every comparison uses the same thresholds. Registration of its sha256
by a run is ``promotion/registration``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from pytest_obelize_bench._util.caps import POLICY_BYTES
from pytest_obelize_bench._util.documents import yaml_with_digest
from pytest_obelize_bench._util.safe_io import UntrustedFileError, read_untrusted
from pytest_obelize_bench._util.strict_model import FrozenModel
from pytest_obelize_bench._util.validation import problem_text

__all__ = [
    "POLICY_FILE_NAME",
    "Efficiency",
    "MetricName",
    "Policy",
    "PolicyError",
    "RowsRule",
    "load_policy",
    "policy_beside",
]

#: The policy's file name, beside the case file.
POLICY_FILE_NAME = "promotion.yaml"

#: The primary metrics a policy can choose (``promotion/metrics.py`` scores each).
MetricName = Literal["verified_success", "rows_migrated_share", "tier_ladder"]


class PolicyError(ValueError):
    """A policy file that cannot be used: one line naming the file and the field."""


class Efficiency(FrozenModel):
    """Runtime decides only at equal quality: per case the median over its attempts."""

    min_median_improvement_pct: float = Field(default=5.0, ge=0.0)
    max_case_regression_pct: float = Field(default=20.0, ge=0.0)
    max_ungated_case_regression_pct: float = Field(default=100.0, ge=0.0)


class RowsRule(FrozenModel):
    """Rows migrated decide only at equal resolution, and never from one row."""

    min_margin: float = Field(default=2.0, gt=0.0)
    max_case_regressions: int = Field(default=0, ge=0)


class Policy(FrozenModel):
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
    try:
        parsed, digest = yaml_with_digest(data, source)
    except UntrustedFileError as exc:
        raise PolicyError(str(exc).splitlines()[0]) from None
    if not isinstance(parsed, dict):
        raise PolicyError(f"{source}: expected a mapping of policy fields")
    try:
        return Policy.model_validate(parsed), digest
    except ValidationError as exc:
        raise PolicyError(f"{source}: field {problem_text(exc.errors()[0], '(top level)')}") from None


def policy_beside(cases_path: Path) -> Policy:
    """The policy beside a case file; its defaults when there is none or it cannot be read."""
    path = Path(cases_path).parent / POLICY_FILE_NAME
    try:
        return load_policy(read_untrusted(path, POLICY_BYTES), str(path))[0]
    except (UntrustedFileError, PolicyError, OSError):
        return Policy()
