"""The pytest entry point: options, one item per case, the tier as the item's outcome.

Kept import-light: ``pytest --help`` and the project's own unit tests must not pay for
loading the case file, the tool under test or anything a round needs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_obelize_bench.case.context import RoundContext
    from pytest_obelize_bench.casefile.cases import Case
    from pytest_obelize_bench.session.controller import Controller

from pytest_obelize_bench.grading.attempts import attempt_stem, item_name
from pytest_obelize_bench.session.keys import (
    COLLECT_PATHS_KEY,
    CONTEXT_KEY,
    ONLY_KEY,
    ONLY_WORKERINPUT_KEY,
)
from pytest_obelize_bench.session.options import options_of
from pytest_obelize_bench.session.outcome import OUTCOME_KEY, REPORT_CHAR, TIER_DISPLAY, CaseOutcome

CONTROLLER_KEY: pytest.StashKey[Controller] = pytest.StashKey()

#: Gate 1 and the fix dry run: their own options, items and controller.
pytest_plugins = ("pytest_obelize_bench.measure.plugin", "pytest_obelize_bench.measure.comparison_plugin")

OPTION_ROUND = "--bench-round"
OPTION_FIXTURES = "--fixtures-only"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("obelize-bench", "obelize migration benchmark")
    group.addoption(
        OPTION_ROUND, type=int, metavar="N", help="run benchmark round N: one item per row of the case file"
    )
    group.addoption(
        OPTION_FIXTURES,
        action="store_true",
        help=(
            "run the offline fixture repositories against their expected.json "
            "(no network, no program but this interpreter)"
        ),
    )
    group.addoption(
        "--bench-cases", metavar="PATH", default="cases/cases.yaml", help="the case file (default: %(default)s)"
    )
    group.addoption(
        "--bench-fixtures", metavar="DIR", default="cases/fixtures", help="the fixtures folder (default: %(default)s)"
    )
    group.addoption(
        "--bench-results",
        metavar="DIR",
        default="results",
        help="where records and the summary go (default: %(default)s)",
    )
    group.addoption("--bench-split", choices=("dev", "holdout"), help="run one side of the split only")
    group.addoption(
        "--bench-fail-on",
        metavar="TIERS",
        help="comma-separated tiers that make the session exit with status 6, e.g. wrong,error",
    )
    group.addoption(
        "--bench-work",
        metavar="DIR",
        help="work root for checkouts and logs (default: <system temp>/obelize-bench-<uid>)",
    )
    group.addoption(
        "--bench-repo-cache", metavar="DIR", help="keep bare repositories at DIR/<owner>/<name>.git and fetch from them"
    )
    group.addoption(
        "--bench-interpreter",
        choices=("exact", "minor"),
        default="exact",
        help="exact: the case's uv key as written; minor: the same implementation and minor version on this machine",
    )
    group.addoption(
        "--bench-python-path",
        action="append",
        default=[],
        metavar="DIR",
        help="a folder holding interpreters for uv to find (repeatable); pyenv's versions/*/bin are searched anyway",
    )
    group.addoption(
        "--exclude-newer", metavar="UTC", help="resolve every install as of this UTC time (replays an earlier round)"
    )
    group.addoption(
        "--obelize",
        metavar="SPEC",
        help="the tool under test: a requirement (obelize==0.7.0) or a path to an obelize checkout",
    )
    group.addoption(
        "--bench-step-timeout",
        metavar="LIMITS",
        help="step time limits in seconds, e.g. suite=900,install=1200 (names: fetch, venv, install, baseline, "
        "after, suite, fix, compile; defaults 300, 300, 900, 600, 600, 600, 900, 120)",
    )
    group.addoption(
        "--bench-allow-dirty",
        action="store_true",
        help="run a round on an uncommitted project tree (the records say so)",
    )
    group.addoption(
        "--bench-no-summary", action="store_true", help="the same as --bench-no-publish (kept for old command lines)"
    )
    group.addoption(
        "--bench-no-publish",
        action="store_true",
        help="keep this run's records in results/round-N/runs/<run-id>/ only, even if the run is a complete round",
    )
    group.addoption(
        "--bench-publish-with-infra-errors",
        action="store_true",
        help=(
            "publish a complete run even though some cases errored for "
            "infrastructure reasons (the document says how many)"
        ),
    )
    group.addoption(
        "--bench-rerun",
        choices=("errors", "all-errors"),
        help="with --bench-run=RUN: run again the cases that run recorded as an infrastructure error (errors), or "
        "every errored case, tool errors too (all-errors); the replaced attempts are kept and listed",
    )
    group.addoption("--bench-run", metavar="RUN", help="the run id --bench-rerun works on (see `obelize-bench runs`)")
    group.addoption(  # hook: resume (resume.py)
        "--bench-resume",
        nargs="?",
        const="latest",
        default=None,
        metavar="RUN",
        help="continue run RUN (default: the newest): a case whose finished record has the same content key is kept",
    )
    group.addoption(
        "--bench-no-preflight",
        action="store_true",
        help=(
            "skip the checks before the round (repositories reachable, "
            "interpreters, disk) that otherwise stop it with exit 4"
        ),
    )
    group.addoption(
        "--bench-keep",
        choices=("failed", "all", "none"),
        default="failed",
        help=(
            "which finished cases keep their checkout and venv: failed (errored "
            "ones, the default), all, or none; logs always stay"
        ),
    )
    group.addoption(
        "--bench-repeat",
        type=int,
        default=1,
        metavar="K",
        help="run every selected case K times, each attempt its own item (case[attempt-N]) in a fresh tree",
    )
    group.addoption(
        "--bench-sandbox",
        choices=("auto", "bwrap", "none"),
        default="auto",
        help=(
            "run every step of a repository's code under bubblewrap: auto "
            "(when it works, else warn), bwrap (required), none"
        ),
    )
    group.addoption(
        "--bench-update-expected",
        action="store_true",
        help="with --fixtures-only: rewrite each fixture's expected.json from this run instead of comparing",
    )


def is_controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    for tier, (_, word, _) in TIER_DISPLAY.items():
        config.addinivalue_line("markers", f"{tier}: reserved for the tier {word}")
    for marker, text in (
        ("dev", "a benchmark case on the dev side of the split"),
        ("holdout", "a benchmark case on the holdout side of the split"),
        ("control", "a negative control: must produce no migration"),
        ("has_tests", "a benchmark case with a test command"),
        ("fixture", "an offline fixture repository"),
    ):
        config.addinivalue_line("markers", f"{marker}: {text}")
    options = options_of(config)  # every option read and checked once, here
    mode = options.mode
    if mode is None:
        return
    _terminate_as_interrupt()

    from pytest_obelize_bench.casefile.cases import CaseFileError
    from pytest_obelize_bench.session.startup import build_context, load_items

    rootdir = Path(config.rootpath)
    try:
        cases_by_path = load_items(config, mode, rootdir)
    except CaseFileError as exc:
        raise pytest.UsageError("the benchmark cannot start:\n" + "\n".join(exc.problems)) from None
    config.stash[COLLECT_PATHS_KEY] = cases_by_path
    # The benchmark items replace whatever pytest would collect: a round never runs unit tests.
    config.args = [str(path) for path in cases_by_path]
    config.args_source = pytest.Config.ArgsSource.ARGS

    if is_controller(config):
        gate = set(options.fail_on)
        context = build_context(config, mode, rootdir, cases_by_path)
        from pytest_obelize_bench.session.controller import Controller

        controller = Controller(config, context, gate)
        config.stash[CONTROLLER_KEY] = controller
        config.pluginmanager.register(controller, "obelize-bench-controller")
        if controller.only is not None:
            config.stash[ONLY_KEY] = frozenset(controller.only)
        context = controller.context  # hook: resume (a resumed run keeps its exclude_newer)
    else:
        from pytest_obelize_bench.case.context import WORKERINPUT_KEY, RoundContext

        # xdist sets workerinput on a worker's config; pytest's Config does not declare it.
        context = RoundContext.from_json(config.workerinput[WORKERINPUT_KEY])  # type: ignore[attr-defined]
        context = _worker_context(config, context, rootdir)  # remote.py: this machine's own paths
        only = config.workerinput.get(ONLY_WORKERINPUT_KEY)  # type: ignore[attr-defined]
        if only is not None:
            config.stash[ONLY_KEY] = frozenset(only)
    config.stash[CONTEXT_KEY] = context


def _worker_context(config: pytest.Config, context: RoundContext, rootdir: Path) -> RoundContext:
    """The controller's context, or the same specs over this worker's own paths (remote.py)."""
    from pytest_obelize_bench.isolation.gitquery import harness_provenance
    from pytest_obelize_bench.session.remote import localize
    from pytest_obelize_bench.session.startup import option_path

    own = {
        "project_root": str(rootdir),
        "cases_path": str(option_path(config, options_of(config).cases, rootdir)),
        "fixtures_dir": str(option_path(config, options_of(config).fixtures, rootdir)),
        "results_dir": str(option_path(config, options_of(config).results, rootdir)),
    }
    workerid = str(config.workerinput.get("workerid", "gw?"))  # type: ignore[attr-defined]  # set by xdist

    def own_commit() -> str | None:
        commit = harness_provenance(rootdir)["commit"]
        return commit if isinstance(commit, str) else None

    return localize(context, workerid=workerid, own=own, own_commit=own_commit)


def _terminate_as_interrupt() -> None:
    """SIGTERM ends a benchmark session the way Ctrl-C does, on the controller and on workers.

    The KeyboardInterrupt unwinds through the running step, whose executor kills its process
    group; the controller keeps every finished record and records the running case as
    interrupted.
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupt)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Hand the round's context to each xdist worker."""
    from pytest_obelize_bench.case.context import WORKERINPUT_KEY

    context = node.config.stash.get(CONTEXT_KEY, None)
    if context is not None:
        node.workerinput[WORKERINPUT_KEY] = context.to_json()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--bench-rerun``: keep only the cases the run recorded as error (of the kind asked for)."""
    only = config.stash.get(ONLY_KEY, None)
    if only is None:
        return
    keep = [item for item in items if getattr(item, "bench_case", None) is not None and item.name in only]
    dropped = [item for item in items if item not in keep]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    paths = parent.config.stash.get(COLLECT_PATHS_KEY, None)
    if not paths:
        return None
    cases = paths.get(file_path.resolve())
    if cases is None:
        return None
    return CaseCollector.from_parent(parent, path=file_path, cases=cases)


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


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> tuple[str, str, Any] | None:
    tier = getattr(report, "bench_tier", None)
    if tier is None or report.when != "call" or not report.passed:
        return None
    letter, word, markup = TIER_DISPLAY[tier]
    return tier, letter, (word, markup)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    controller = config.stash.get(CONTROLLER_KEY, None)
    if controller is not None:
        controller.terminal_summary(terminalreporter, list_tiers=REPORT_CHAR in terminalreporter.reportchars)
    context = config.stash.get(CONTEXT_KEY, None)
    warning = (context.sandbox or {}).get("warning") if context is not None and is_controller(config) else None
    if warning:
        terminalreporter.write_line(f"obelize-bench: {warning}", yellow=True, bold=True)
