"""A round's cases as the kernel's items (``kernel.py``): the units of a case file, the fixtures
that stage a case, and the body that hands its record to the controller.

The case's protocol itself (``case/pipeline.py``) knows no pytest: the fixtures call its stages,
and the body turns its ``Conclusion`` into a ``Handover`` and, when it failed, ``pytest.fail``.
Registered by the entry point's ``pytest_plugins``, so ``pytest --help`` loads it: what a case
runs is imported inside the fixtures, for start-up time.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_obelize_bench.grading.attempts import attempt_stem, item_name, parse_item_name
from pytest_obelize_bench.options.read import options_of
from pytest_obelize_bench.session.kernel import Handover, Unit, hand_over
from pytest_obelize_bench.session.stash_keys import CONTEXT_KEY, CONTROLLER_KEY, ROUND_FILES_KEY
from pytest_obelize_bench.session.tier_outcome import tier_status

if TYPE_CHECKING:
    from pytest_obelize_bench.case.context import RoundContext
    from pytest_obelize_bench.casefile.cases import Case


class RoundKind:
    """A round's or the fixtures pass's cases: one unit per case and attempt, ids sorted."""

    def __init__(self, config: pytest.Config, cases_by_path: dict[Path, list[Case]]) -> None:
        self.config = config
        repeat = options_of(config).repeat
        self._files = {path: _units(cases, repeat) for path, cases in cases_by_path.items()}

    def files(self) -> dict[Path, list[Unit]]:
        return self._files

    def worker_input(self) -> dict[str, Any]:
        from pytest_obelize_bench.case.context import WORKERINPUT_KEY

        # read when each worker starts: a resumed run's context differs from the first one built
        return {WORKERINPUT_KEY: self.config.stash[CONTEXT_KEY].to_json()}

    def preflight(self, names: list[str]) -> None:
        controller = self.config.stash.get(CONTROLLER_KEY, None)
        if controller is not None:
            # an attempt's item is ``case[attempt-N]``: its case, once, whatever the number of attempts
            controller.preflight_cases([controller.watch.cases.get(parse_item_name(name)[0]) for name in names])


def _units(cases: list[Case], repeat: int) -> list[Unit]:
    units = []
    for case in sorted(cases, key=lambda c: c.id):
        markers: list[str | pytest.MarkDecorator] = []
        if case.origin == "fixture":
            markers.append("fixture")
        if case.split is not None:
            markers.append(case.split)
        if case.control:
            markers.append("control")
        if case.test_cmd is not None:
            markers.append("has_tests")
        if case.retired is not None:
            markers.append(pytest.mark.skip(reason=f"retired in round {case.retired.round}: {case.retired.reason}"))
        # Under --bench-repeat each attempt is an item of its own, so xdist spreads them.
        for attempt in range(1, repeat + 1):
            units.append(
                Unit(
                    name=item_name(case.id, attempt, repeat),
                    body=_bench_case,
                    label=f"case {item_name(case.id, attempt, repeat)}",
                    markers=tuple(markers),
                    attributes={"bench_case": case, "bench_attempt": attempt},
                )
            )
    return units


def _bench_case(bench_legacy_sdk: Any, request: pytest.FixtureRequest) -> None:
    """The body of every case item: steps 5 to 10 on what the fixtures prepared."""
    from pytest_obelize_bench.case.pipeline import conclude_case
    from pytest_obelize_bench.session.remote import logs_of, tidy_on_worker

    item = request.node
    config = item.config
    done = conclude_case(bench_legacy_sdk, update_expected=options_of(config).update_expected)
    record = done.record
    context = config.stash[CONTEXT_KEY]
    # Plain attributes of the report: xdist serializes them to the controller.
    attributes: dict[str, Any] = {
        "bench_record": record.to_json(),
        "bench_tier": record.tier,
        "bench_case_id": record.case,
        "bench_artefacts": done.artefacts_json,
        "bench_beside": done.beside,
    }
    if context.remote:  # remote.py: the logs stay on that machine
        folder = attempt_stem(record.case, getattr(item, "bench_attempt", 1))
        attributes["bench_logs"] = logs_of(context, folder)
        tidy_on_worker(context, folder, record.tier, options_of(config).keep)
    hand_over(
        item,
        Handover(
            attributes=attributes,
            status=tier_status(record.tier, fixtures=context.mode == "fixtures"),
            junit=("tier", record.tier),
            # pytest lists the "error" category in its ERRORS section: say what the case hit.
            error_line=done.error_line if record.tier == "error" else None,
        ),
    )
    if done.failure is not None:
        pytest.fail(done.failure, pytrace=False)


# -- fixtures: each stage runs only if the ones before it succeeded --------------------


@pytest.fixture
def bench_case(request: pytest.FixtureRequest) -> Case:
    """The case this item measures."""
    from pytest_obelize_bench.casefile.cases import Case

    case = getattr(request.node, "bench_case", None)
    if not isinstance(case, Case):
        pytest.fail("bench_case is only available to benchmark items")
    return case


@pytest.fixture
def bench_context(request: pytest.FixtureRequest) -> RoundContext:
    return request.config.stash[CONTEXT_KEY]


@pytest.fixture
def bench_workspace(bench_case: Case, bench_context: RoundContext, request: pytest.FixtureRequest) -> Any:
    """A clean work folder, checked for pytest configs above it, and the case's step runner."""
    from pytest_obelize_bench.case.pipeline import start_case

    reviews = request.config.stash[ROUND_FILES_KEY].reviews  # read once, when the session started
    return start_case(bench_case, bench_context, attempt=getattr(request.node, "bench_attempt", 1), reviews=reviews)


@pytest.fixture
def bench_checkout(bench_workspace: Any) -> Any:
    """The repository at its pinned commit (or the fixture's copy)."""
    from pytest_obelize_bench.case.pipeline import stage_checkout

    return stage_checkout(bench_workspace)


@pytest.fixture
def bench_venv(bench_checkout: Any) -> Any:
    """The case's uv virtualenv on its interpreter key (the running interpreter for fixtures)."""
    from pytest_obelize_bench.case.pipeline import stage_venv

    return stage_venv(bench_checkout)


@pytest.fixture
def bench_legacy_sdk(bench_venv: Any) -> Any:
    """The reviewed install commands and the pinned legacy SDK, its version checked."""
    from pytest_obelize_bench.case.pipeline import stage_legacy_sdk

    return stage_legacy_sdk(bench_venv)


__all__ = ["RoundKind"]
