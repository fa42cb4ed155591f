"""A case as a pytest item: the collector of a case file, the item, the fixtures that stage it,
and the report hook that hands its record to the controller.

Registered by the entry point (``plugin.py``'s ``pytest_plugins``). The case's protocol itself
(``case/pipeline.py``) knows no pytest: the fixtures call its stages, and the item's body turns
its ``Conclusion`` into the stash entry and, when it failed, ``pytest.fail``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_obelize_bench.grading.attempts import attempt_stem, item_name
from pytest_obelize_bench.options.read import options_of
from pytest_obelize_bench.session.keys import CONTEXT_KEY
from pytest_obelize_bench.session.outcome import OUTCOME_KEY, CaseOutcome

if TYPE_CHECKING:
    from pytest_obelize_bench.case.context import RoundContext
    from pytest_obelize_bench.casefile.cases import Case


class BenchItem(pytest.Function):
    """A benchmark item: a pytest Function (so fixtures work) reported as its case."""

    bench_case: Case
    #: 1 for a single run; under --bench-repeat, which attempt this item is.
    bench_attempt: int = 1

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"case {self.name}"


class CaseCollector(pytest.File):
    """A case file (or one fixture's case.yaml): yields one item per case, ids sorted."""

    def __init__(self, *, cases: list[Case], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cases = cases

    def collect(self) -> list[pytest.Item]:
        items: list[pytest.Item] = []
        repeat = options_of(self.config).repeat
        for case, attempt in ((c, n) for c in sorted(self.cases, key=lambda c: c.id) for n in range(1, repeat + 1)):
            # Under --bench-repeat each attempt is an item of its own, so xdist spreads them.
            name = item_name(case.id, attempt, repeat)
            item = BenchItem.from_parent(self, name=name, callobj=_bench_case)
            item.bench_case = case
            item.bench_attempt = attempt
            if case.origin == "fixture":
                item.add_marker("fixture")
            if case.split is not None:
                item.add_marker(case.split)
            if case.control:
                item.add_marker("control")
            if case.test_cmd is not None:
                item.add_marker("has_tests")
            if case.retired is not None:
                item.add_marker(
                    pytest.mark.skip(reason=f"retired in round {case.retired.round}: {case.retired.reason}")
                )
            items.append(item)
        return items


def _bench_case(bench_legacy_sdk: Any, request: pytest.FixtureRequest) -> None:
    """The body of every benchmark item: steps 5 to 10 on what the fixtures prepared."""
    from pytest_obelize_bench.case.pipeline import conclude_case

    item = request.node
    done = conclude_case(bench_legacy_sdk, update_expected=options_of(item.config).update_expected)
    item.stash[OUTCOME_KEY] = CaseOutcome(
        case_id=done.record.case,
        record_json=done.record.to_json(),
        tier=done.record.tier,
        error_line=done.error_line,
        artefacts_json=done.artefacts_json,
        beside=done.beside,
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

    return start_case(bench_case, bench_context, attempt=getattr(request.node, "bench_attempt", 1))


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


# -- the outcome ------------------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    outcome = item.stash.get(OUTCOME_KEY, None)
    if call.when == "call" and outcome is not None:
        # Plain attributes of the report: xdist serializes them to the controller.
        report.bench_record = outcome.record_json
        report.bench_tier = outcome.tier
        report.bench_case_id = outcome.case_id
        report.bench_artefacts = outcome.artefacts_json
        report.bench_beside = outcome.beside
        context = item.config.stash.get(CONTEXT_KEY, None)
        if context is not None and context.remote:  # remote.py: the logs stay on that machine
            from pytest_obelize_bench.session.remote import logs_of, tidy_on_worker

            folder = _folder_of(outcome.case_id, item)
            report.bench_logs = logs_of(context, folder)
            tidy_on_worker(context, folder, outcome.tier, options_of(item.config).keep)
        if outcome.tier == "error" and report.passed:
            # pytest lists the "error" category in its ERRORS section: say what the case hit.
            report.longrepr = outcome.error_line
        # junitxml reads the properties from the teardown report, which copies the item's list.
        item.user_properties.append(("tier", outcome.tier))
    return report


def _folder_of(case_id: str, item: pytest.Item) -> str:
    """The case's work folder, as pipeline.start_case names it."""
    attempt = getattr(item, "bench_attempt", 1)
    return attempt_stem(case_id, attempt)


__all__ = ["BenchItem", "CaseCollector"]
