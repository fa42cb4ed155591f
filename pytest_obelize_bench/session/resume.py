"""``--bench-resume[=RUN]``: continue a run, running only the cases whose finished record is stale.

A case is kept (not run again) when the run holds a finished, non-error record of it whose
``content_key`` equals the key the case would run under now (``content_key.py``), and whose review
answers are still what ``cases/reviews/round-N.yaml`` says of its patch (a review filed since
makes it run again, so no kept record carries an answer graded before it).  A kept record
stands in the run folder with ``resumed_from`` naming the run; every other case runs and its new
record is added to the run as a rerun's would be.  The run's ``exclude_newer`` carries over, unless
``--exclude-newer`` names another cutoff (which changes every key, so everything runs again).

Predicting the key needs the interpreter a case's venv would run: it is asked once per distinct
request, the way the ``venv`` step asks (``uv python find`` on the discovery PATH, then the
interpreter itself).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_obelize_bench.case.content_key import content_key
from pytest_obelize_bench.case.context import RoundContext
from pytest_obelize_bench.case.interpreter import discovery_path, minor_request, parse_interpreter_key, resolve_program
from pytest_obelize_bench.casefile.reviews import ReviewBook
from pytest_obelize_bench.casefile.schema import Case
from pytest_obelize_bench.grading.record import Record, RecordError
from pytest_obelize_bench.isolation.executor import run_program
from pytest_obelize_bench.isolation.policy import NO_INTERPRETER_DOWNLOADS, uv_binary
from pytest_obelize_bench.isolation.sandbox import provenance_label
from pytest_obelize_bench.records.review_drift import review_drift
from pytest_obelize_bench.records.runs import REGRADED_KIND, read_manifest

LATEST = "latest"
FIND_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class ResumePlan:
    run_id: str
    context: RoundContext
    #: case id -> the finished record that stands
    kept: dict[str, Record]
    #: the case ids that run again
    to_run: list[str]


def latest_run(runs_root: Path) -> str | None:
    """The newest session run under ``results/round-N/runs`` (ids sort by start time); a run
    ``regrade --write`` made is no session's to continue, and a dot folder is one being written."""

    def regraded(folder: Path) -> bool:
        try:
            return read_manifest(folder).kind == REGRADED_KIND
        except RecordError:
            return False  # resuming it says what is wrong with it

    if not runs_root.is_dir():
        return None
    found = sorted(
        entry.name
        for entry in runs_root.iterdir()
        if entry.is_dir()
        and not entry.is_symlink()
        and entry.name[0] != "."
        and (entry / "run.json").is_file()
        and not regraded(entry)
    )
    return found[-1] if found else None


def choose(
    cases: Sequence[Case],
    records: Mapping[str, Record],
    keys: Mapping[str, str | None],
    reviews: ReviewBook | None = None,
) -> tuple[dict[str, Record], list[str]]:
    """Which records stand and which cases run: pure, from the run's records, today's keys and,
    given, today's review answers (a record graded before its patch's answer changed runs again)."""
    kept: dict[str, Record] = {}
    to_run: list[str] = []
    for case in cases:
        record = records.get(case.id)
        key = keys.get(case.id)
        fresh = (
            record is not None
            and key is not None
            and record.error is None
            and record.tier != "error"
            and record.provenance.content_key == key
            and (reviews is None or not review_drift(0, {case.id: record}, reviews))
        )
        if fresh and record is not None:
            kept[case.id] = record
        else:
            to_run.append(case.id)
    return kept, to_run


def _interpreter_key(request: str, context: RoundContext) -> str | None:
    """The uv key of the interpreter a venv made for ``request`` would run, or None."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX")}
    env.update(NO_INTERPRETER_DOWNLOADS)
    env["PATH"] = discovery_path(env.get("PATH"), [Path(p) for p in context.python_search])
    found = run_program(
        [uv_binary(), "python", "find", "--no-config", "--no-project", request], env=env, timeout=FIND_TIMEOUT_S
    )
    lines = found.output.split()
    if found.exit_code != 0 or not lines:
        return None
    asked = run_program([lines[-1], "-I", "-c", resolve_program()], env=env, timeout=FIND_TIMEOUT_S)
    try:
        return str(json.loads(asked.output.splitlines()[-1])["key"])
    except (ValueError, KeyError, IndexError, TypeError):
        return None


def _request(case: Case, policy: str) -> str | None:
    try:
        key = parse_interpreter_key(case.python or "")
    except ValueError:
        return None
    return case.python if policy == "exact" else minor_request(key)


def expected_keys(cases: Iterable[Case], context: RoundContext) -> dict[str, str | None]:
    """Each case's content key as it would run now (None when its interpreter cannot be found)."""
    asked: dict[str, str | None] = {}
    keys: dict[str, str | None] = {}
    for case in cases:
        request = _request(case, context.interpreter_policy)
        if request is not None and request not in asked:
            asked[request] = _interpreter_key(request, context)
        used = asked.get(request) if request is not None else None
        keys[case.id] = (
            None
            if used is None
            else content_key(
                case,
                tool=context.tool,
                packs=context.packs,
                interpreter_used=used,
                exclude_newer=context.exclude_newer,
                sandbox=provenance_label(context.sandbox, suites_network=case.tests_require_network, offline=False),
                harness=context.harness,
                attempt=1,
            )
        )
    return keys


def plan_resume(
    run_id: str,
    run_exclude_newer: str | None,
    context: RoundContext,
    cases: Sequence[Case],
    records: Mapping[str, Record],
    reviews: ReviewBook,
    *,
    cutoff_given: bool,
) -> ResumePlan:
    """The resumed session's context (the run's cutoff) and which cases it keeps and runs."""
    if not cutoff_given and run_exclude_newer:
        context = context.model_copy(update={"exclude_newer": run_exclude_newer})
    wanted = [case for case in cases if case.retired is None]
    kept, to_run = choose(wanted, records, expected_keys(wanted, context), reviews)
    return ResumePlan(run_id=run_id, context=context, kept=kept, to_run=to_run)


def mark_resumed(record: Record, run_id: str) -> Record:
    """The kept record, saying which run it was kept from (an earlier resume's mark stays)."""
    if record.provenance.resumed_from:
        return record
    provenance = record.provenance.model_copy(update={"resumed_from": run_id})
    return record.model_copy(update={"provenance": provenance})


__all__ = ["LATEST", "ResumePlan", "choose", "expected_keys", "latest_run", "mark_resumed", "plan_resume"]
