"""A project with 20 cases and a control, and pairs of run folders of a deterministic tool.

Each run folder is laid out as a session writes it (``run.json`` registering the policy, the case
file's keys and the machine; ``<case>.json`` and ``<case>.attempt-N.json`` for every attempt);
every record is a real ``Record`` with the measurements that make its tier. The gate recomputes
the tiers itself, so the ``tier`` written in a file is never what decides.

A case's outcome on an attempt is one letter: ``v`` verified (nothing unmigrated; verified once
its patch is reviewed), ``p`` partial (one of its three rows unmigrated), ``u`` unsupported
(nothing written), ``w`` wrong (every row edited, but the patch does not compile), ``t`` a tool
error, ``i`` an infrastructure error.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from pytest_obelize_bench.casefile.cases import load_case_file
from pytest_obelize_bench.casefile.keys_digest import keys_sha256
from pytest_obelize_bench.grading.record import ErrorInfo, Measurements, Provenance, Record, SuiteResult
from pytest_obelize_bench.grading.tiers import tier
from tests.helpers import casefile
from tests.helpers.project import PROJECT
from tests.helpers.runs import PINS, RECENT, split_of

SHIPPED_POLICY = (PROJECT / "cases" / "promotion.yaml").read_bytes()
#: The shipped policy with verified_success as its metric: the protocol's target, for the rules'
#: own tests (every other threshold is the shipped one).
VERIFIED_POLICY = SHIPPED_POLICY.replace(b"\nmetric: rows_migrated_share\n", b"\nmetric: verified_success\n")
assert VERIFIED_POLICY != SHIPPED_POLICY
N = 20
CONTROL = "ctrl__migrated"
ROWS = 3


def case_id(index: int) -> str:
    return f"owner{index:02d}__repo"


def make_project(root: Path, policy: bytes = SHIPPED_POLICY) -> Path:
    """cases/cases.yaml (20 cases of three rows each, every third holdout, one control) and the policy."""
    rows = [
        casefile.case_row(
            f"owner{i:02d}",
            "repo",
            split=split_of(i),
            test_cmd="python -m pytest -q",
            has_test_files=True,
            ground_truth={
                "what_it_is": "A test repository.",
                "files_read": ["app.py"],
                "call_sites": [
                    {"path": "app.py", "line": line, "kind": "call", "symbol": "google.generativeai", "label": "auto"}
                    for line in range(1, ROWS + 1)
                ],
                "manifests": [],
                "must_not_report": [{"path": "docs.py", "line": 1, "why": "a comment"}],
                "tests_cover_change": True,
                "tests_cover_change_why": "The suite calls every site.",
            },
        )
        for i in range(N)
    ]
    casefile.write(root / "cases" / "cases.yaml", casefile.case_file(rows, [casefile.control_row("ctrl", "migrated")]))
    (root / "cases" / "promotion.yaml").write_bytes(policy)
    return root


def policy_sha(project: Path) -> str:
    return hashlib.sha256((project / "cases" / "promotion.yaml").read_bytes()).hexdigest()


def patch_digest(case: str, patch: str) -> str:
    return hashlib.sha256(f"{case}:{patch}".encode()).hexdigest()


def _record(case: str, letter: str, attempt: int, *, control: bool, patch: str, runtime: float, **extra: Any) -> Record:
    errored = letter in "ti"
    error = None
    if letter == "t":
        error = ErrorInfo(step="fix", reason="obelize_failed", detail="exit 2")
    elif letter == "i":
        error = ErrorInfo(step="install", reason="install_failed", detail="no network")
    applied = letter in "vpw" and not control
    values: dict[str, Any] = {
        "detected": 0 if control else ROWS,
        "false_positive": 0,
        "missed_call_site": 0,
        "forbidden_reported": 0,
        "manifest_reported": 0,
        "patch_applied": applied,
        "patch_compiles": (letter != "w") if applied else None,
        "unmigrated": 0 if control else {"v": 0, "p": 1, "u": ROWS}.get(letter, 0),
        "false_positive_edit": 0,
        "runtime_seconds": runtime,
    }
    values.update(extra)
    if errored:
        values = {key: None for key in values}
    measurements = Measurements(
        **values,
        tests_baseline=SuiteResult(status="pass", passed=3, failed=0),
        tests_after=SuiteResult(status="pass" if not errored else "not_run", passed=3 if not errored else None),
        tests_cover_change=None if control else True,
    )
    pins = dict(PINS)
    return Record(
        case=case,
        origin="corpus",
        control=control,
        split=None if control else split_of(int(case[5:7])),  # type: ignore[arg-type]
        error=error,
        measurements=measurements,
        provenance=Provenance(
            obelize_version=patch,
            exclude_newer=pins["exclude_newer"],
            sdk_from=pins["sdk_from"],
            sdk_to=pins["sdk_to"],
            python_used=pins["python"],
            run_at=RECENT,
            machine="x86_64",
            os="Linux",
            sandbox="bwrap 0.8.0 (suites offline)",
            patch_sha256=patch_digest(case, patch) if applied else None,
        ),
        tier=tier(error, measurements) if not control else "unsupported",
        attempt=attempt,
    )


def write_run(
    project: Path,
    run_id: str,
    outcomes: Mapping[int, str] | None = None,
    *,
    default: str = "p",
    repeat: int = 2,
    version: str = "0.8.0",
    runtime: float | Mapping[int, float] = 10.0,
    control: str = "held",
    extra: Mapping[int, Mapping[str, Any]] | None = None,
    review: bool = True,
    **manifest: Any,
) -> Path:
    """A run of every case ``repeat`` times: ``outcomes[i]`` is case i's letters (one for all attempts).

    ``review`` writes a review answer (no edits, correct) for every patch a ``v`` or ``p`` attempt
    wrote.
    """
    folder = project / "results" / "round-2" / "runs" / run_id
    folder.mkdir(parents=True)
    reviewed: list[str] = []
    for i in range(N):
        letters = (outcomes or {}).get(i, default)
        letters = letters * repeat if len(letters) == 1 else letters
        assert len(letters) == repeat, (i, letters)
        seconds = runtime if isinstance(runtime, (int, float)) else runtime.get(i, 10.0)
        for attempt, letter in enumerate(letters, start=1):
            record = _record(
                case_id(i), letter, attempt, control=False, patch=version, runtime=seconds, **(extra or {}).get(i, {})
            )
            if letter in "vp":
                reviewed.append(case_id(i))
            _write(folder, record)
    for attempt in range(1, repeat + 1):
        broken = {"detected": 1, "false_positive": 1} if control == "broken" else {}
        _write(folder, _record(CONTROL, "u", attempt, control=True, patch=version, runtime=5.0, **broken))
    if review:
        add_reviews(project, [(case, patch_digest(case, version)) for case in sorted(set(reviewed))])
    data = manifest_data(project, run_id, version, repeat)
    data.update(manifest)
    (folder / "run.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    return folder


def _write(folder: Path, record: Record) -> None:
    name = f"{record.case}.json" if record.attempt == 1 else f"{record.case}.attempt-{record.attempt}.json"
    (folder / name).write_text(record.to_json(), encoding="utf-8")


def manifest_data(project: Path, run_id: str, version: str, repeat: int) -> dict[str, Any]:
    cases = sorted([case_id(i) for i in range(N)] + [CONTROL])
    return {
        "schema_version": 1,
        "run": run_id,
        "round": 2,
        "cases_expected": cases,
        "cases_recorded": cases,
        "tool": {"version": version, "commit": None, "tree_dirty": None, "source": "pypi"},
        "exclude_newer": dict(PINS)["exclude_newer"],
        "interpreter_policy": "minor",
        "sandbox": "bwrap 0.8.0 (suites offline)",
        "harness": {"version": "0.1.0", "commit": "c0ffee", "tree_dirty": False},
        "started_at": "2026-12-01T09:00:00Z",
        "ended_at": RECENT,
        "interrupted": False,
        "repeat": repeat,
        "promotion_policy_sha256": policy_sha(project),
        "case_keys_sha256": keys_sha256(load_case_file(project / "cases" / "cases.yaml").cases),
        "machine_class": "Linux-x86_64-2cpu",
    }


def add_reviews(project: Path, answers: Sequence[tuple[str, str]], **fields: Any) -> Path:
    """Review answers (no edits, correct unless ``fields`` say otherwise) for (case, digest) pairs."""
    path = project / "cases" / "reviews" / "round-2.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else {"reviews": []}
    known = {(row["case"], row["patch_sha256"]) for row in data["reviews"]}
    for case, digest in answers:
        if (case, digest) in known:
            continue
        row = {"case": case, "patch_sha256": digest, "human_edits": 0, "patch_correct": True}
        row.update({"reviewer": "tester", "reviewed_at": "2026-12-02", **fields})
        data["reviews"].append(row)
    return casefile.write(path, data)


def remove_reviews(project: Path) -> None:
    shutil.rmtree(project / "cases" / "reviews", ignore_errors=True)
