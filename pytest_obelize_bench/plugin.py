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

from pytest_obelize_bench.options.read import options_of
from pytest_obelize_bench.session.stash_keys import (
    COLLECT_PATHS_KEY,
    CONTEXT_KEY,
    CONTROLLER_KEY,
    ONLY_KEY,
    ONLY_WORKERINPUT_KEY,
    ORDER_KEY,
    ORDER_WORKERINPUT_KEY,
    ROUND_FILES_KEY,
)
from pytest_obelize_bench.session.tier_outcome import REPORT_CHAR, TIER_DISPLAY

#: The one item stack, and the measurements that register their kind with it: a round's cases
#: (with the fixtures that stage one), Gate 1 and the fix dry run, the comparison arm.
pytest_plugins = (
    "pytest_obelize_bench.session.kernel",
    "pytest_obelize_bench.session.round_kind",
    "pytest_obelize_bench.session.frame_kind",
    "pytest_obelize_bench.session.comparison_kind",
)


def pytest_addoption(parser: pytest.Parser) -> None:
    from pytest_obelize_bench.options.declarations import add_options

    add_options(parser)


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
    # Imported here, not at the top: the kernel is one of this plugin's ``pytest_plugins``, which
    # pytest imports itself, rewriting their asserts; imported before that, it warns in every session.
    from pytest_obelize_bench.session.kernel import kept_objects

    with kept_objects():
        _start_benchmark(config, mode)


def _start_benchmark(config: pytest.Config, mode: str) -> None:
    """A benchmark session's configure: the case file, the round's context, its controller."""
    options = options_of(config)
    _terminate_as_interrupt()
    # The benchmark's items run in the harness's own order (longest first, ties in file order)
    # whatever plugins are installed: pytest-randomly would shuffle them, reseed ``random`` before
    # each item, and head the session with a seed that changes nothing.  hypothesis's plugin (the
    # test extra installs both) imports all of hypothesis in its terminal summary, about 0.16 s at
    # the end of every session; a benchmark session runs no hypothesis test.
    from pytest_obelize_bench.session.kernel import SET_ASIDE_PLUGINS, own_temp_folder, register_kind

    for name in SET_ASIDE_PLUGINS:
        config.pluginmanager.set_blocked(name)

    from pytest_obelize_bench.casefile.cases import UNREADABLE, CaseFileError
    from pytest_obelize_bench.session.startup import build_context, load_items

    rootdir = Path(config.rootpath)
    try:
        cases_by_path = load_items(config, mode, rootdir)
    except CaseFileError as exc:
        lines = list(exc.problems)
        if any(problem.rule == UNREADABLE for problem in exc.found):
            lines.append(
                f"(pytest ran in {config.invocation_params.dir}: run it from the project root, the folder that "
                "holds cases/, or name the file with --bench-cases=FILE)"
            )
        raise pytest.UsageError("the benchmark cannot start:\n" + "\n".join(lines)) from None
    config.stash[COLLECT_PATHS_KEY] = cases_by_path
    # The benchmark items replace whatever pytest would collect: a round never runs unit tests.
    from pytest_obelize_bench.session.round_kind import RoundKind

    register_kind(config, RoundKind(config, cases_by_path))

    if is_controller(config):
        own_temp_folder(config)
        gate = set(options.fail_on)
        context = build_context(config, mode, rootdir, cases_by_path)
        from pytest_obelize_bench.session.round_controller import Controller

        controller = Controller(config, context, gate)
        config.stash[CONTROLLER_KEY] = controller
        config.pluginmanager.register(controller, "obelize-bench-controller")
        if controller.only is not None:
            config.stash[ONLY_KEY] = frozenset(controller.only)
            if not controller.only:
                controller.workers_skipped = _no_workers(config)
        config.stash[ORDER_KEY] = controller.case_seconds
        context = controller.context  # hook: resume (a resumed run keeps its exclude_newer)
    else:
        from pytest_obelize_bench.case.context import WORKERINPUT_KEY, RoundContext

        # xdist sets workerinput on a worker's config; pytest's Config does not declare it.
        context = RoundContext.from_json(config.workerinput[WORKERINPUT_KEY])  # type: ignore[attr-defined]
        context = _worker_context(config, context, rootdir)  # remote.py: this machine's own paths
        only = config.workerinput.get(ONLY_WORKERINPUT_KEY)  # type: ignore[attr-defined]
        if only is not None:
            config.stash[ONLY_KEY] = frozenset(only)
        seconds = config.workerinput.get(ORDER_WORKERINPUT_KEY)  # type: ignore[attr-defined]
        config.stash[ORDER_KEY] = {str(case): float(value) for case, value in (seconds or {}).items()}
    config.stash[CONTEXT_KEY] = context


def _no_workers(config: pytest.Config) -> bool:
    """Nothing runs again (a resume that keeps every record, a rerun with nothing to rerun): xdist
    starts no worker, whose start would cost more than the rest of the session; the kept records
    are published the same way.  Runs before xdist's own configure, which then makes no workers.
    True when workers were asked for and are not started."""
    if getattr(config.option, "dist", "no") == "no":
        return False
    config.option.numprocesses, config.option.dist, config.option.tx = 0, "no", []
    return True


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
        return harness_provenance(rootdir).commit

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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--bench-rerun``: keep only the cases the run recorded as error (of the kind asked for);
    then the cases longest first, by the round's latest run (``session/ordering.py``)."""
    only = config.stash.get(ONLY_KEY, None)
    if only is not None:
        keep = [item for item in items if getattr(item, "bench_case", None) is not None and item.name in only]
        dropped = [item for item in items if item not in keep]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = keep
    seconds = config.stash.get(ORDER_KEY, None)
    if seconds:
        from pytest_obelize_bench.session.ordering import longest_first

        ids = [_case_id(item) for item in items]
        rank = {case: index for index, case in enumerate(longest_first(list(dict.fromkeys(ids)), seconds))}
        order = sorted(range(len(items)), key=lambda index: rank[ids[index]])
        items[:] = [items[index] for index in order]


def _case_id(item: pytest.Item) -> str:
    case = getattr(item, "bench_case", None)
    return item.nodeid if case is None else str(case.id)


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    """At the start of a benchmark session: which isolation its cases get, and what that leaves open."""
    context = config.stash.get(CONTEXT_KEY, None)
    if context is None or not is_controller(config) or context.mode not in ("round", "fixtures"):
        return None
    sandbox = context.sandbox
    if sandbox.enabled:
        view = "overlay" if sandbox.overlay else "copy"
        why = f"; {sandbox.why}" if sandbox.why else ""
        lines = [
            f"obelize-bench: isolation: bwrap {sandbox.version} at {sandbox.program} "
            f"({view} view of environment templates{why})"
        ]
    else:
        lines = [
            "obelize-bench: isolation: unsandboxed; each case's venv copies its packages from the uv cache instead of "
            "linking into it, so no case can change what another case or a later round installs; a suite can still "
            "write anything this user can (docs/how-to/sandbox.md)"
        ]
    files = config.stash.get(ROUND_FILES_KEY, None)
    unreachable = {} if files is None else files.unreachable
    if unreachable:
        lines.append(f"obelize-bench: not run, out of reach here ({len(unreachable)} rows, --bench-unreachable):")
        lines.extend(f"  {case}: {reason}" for case, reason in unreachable.items())
    return lines


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    controller = config.stash.get(CONTROLLER_KEY, None)
    if controller is not None:
        controller.terminal_summary(terminalreporter, list_tiers=REPORT_CHAR in terminalreporter.reportchars)
    context = config.stash.get(CONTEXT_KEY, None)
    warning = context.sandbox.warning if context is not None and is_controller(config) else None
    if warning:
        terminalreporter.write_line(f"obelize-bench: {warning}", yellow=True, bold=True)
