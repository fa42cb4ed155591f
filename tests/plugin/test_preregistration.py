"""A run registers the promotion policy in force, the case file's keys and its machine when it starts."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from pytest_obelize_bench.casefile.cases import load_case_file
from pytest_obelize_bench.casefile.keys_digest import keys_sha256
from tests.helpers import casefile
from tests.helpers.project import PROJECT


def test_run_json_registers_the_policy_sha256_at_the_start(pytester: pytest.Pytester, tmp_path: Path) -> None:
    missing = (tmp_path / "origins" / "gone").as_uri()
    cases = pytester.path / "cases"
    casefile.write(cases / "cases.yaml", casefile.case_file([casefile.case_row("beta", "gone", repo=missing)]))
    policy = (PROJECT / "cases" / "promotion.yaml").read_bytes()
    (cases / "promotion.yaml").write_bytes(policy)
    result = pytester.runpytest_subprocess(
        "--bench-round=2",
        "--bench-repeat=2",
        "--bench-allow-dirty",
        "--bench-no-preflight",
        f"--bench-work={tmp_path / 'work'}",
    )
    # The repository is out of reach: each attempt is a fetch_failed record, and the run is kept,
    # not published. (With the preflight on, the session would stop before making a run at all.)
    assert result.ret == 0, result.stdout.str()[-2000:]
    (run,) = (pytester.path / "results" / "round-2" / "runs").iterdir()
    manifest = json.loads((run / "run.json").read_text(encoding="utf-8"))
    assert manifest["promotion_policy_sha256"] == hashlib.sha256(policy).hexdigest()
    assert manifest["case_keys_sha256"] == keys_sha256(load_case_file(cases / "cases.yaml").cases)
    assert manifest["repeat"] == 2 and manifest["machine_class"].count("-") == 2
