"""``obelize-bench compare A B``: the promotion policy's alpha and power that its verdict is told at.

Each side (a round number, a run named any way, or a folder of records) is read by
``summary.runcommands.compare`` with its own case file; the comparison itself is
``report.compare``. The verdict is told at the promotion policy's alpha, with its power for the
minimum detectable difference (the policy's defaults when there is no readable policy).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["policy_alpha_power"]


def policy_alpha_power(cases: Path) -> tuple[float, float]:
    """The promotion policy's alpha and power (its defaults when there is no readable policy)."""
    from pytest_obelize_bench._util.caps import POLICY_BYTES
    from pytest_obelize_bench._util.safe_io import UntrustedFileError, read_untrusted
    from pytest_obelize_bench.promotion.policy import POLICY_FILE_NAME, Policy, PolicyError, load_policy

    path = Path(cases).parent / POLICY_FILE_NAME
    try:
        policy = load_policy(read_untrusted(path, POLICY_BYTES), str(path))[0]
    except (UntrustedFileError, PolicyError):
        policy = Policy()
    return policy.alpha, policy.power
