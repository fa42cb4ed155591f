"""Before any case runs: can this machine run the round at all?

Three checks, each one line per failing case, so a round that could only end in infrastructure
errors (GitHub unreachable, an interpreter missing, a full disk) stops within seconds instead of
publishing a column of ``error``: every repository answers ``git ls-remote`` or is in the
repository cache, every interpreter key resolves under the policy, and the work root's disk has
room for an estimate of the round. Every command goes through the executor, argv only, with the
URL after ``--end-of-options`` so no value of the case file can become a git option.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_obelize_bench.case.context import RoundContext
from pytest_obelize_bench.case.environment import discovery_path
from pytest_obelize_bench.case.interpreter import minor_request, parse_interpreter_key
from pytest_obelize_bench.casefile.cases import Case
from pytest_obelize_bench.isolation.executor import Executor, ProcessExecutor
from pytest_obelize_bench.isolation.policy import NO_INTERPRETER_DOWNLOADS, uv_binary
from pytest_obelize_bench.isolation.reachability import (
    EXIT_PREFLIGHT,
    LS_REMOTE_TIMEOUT_S,
    PARALLEL_PROBES,
    Probe,
    Repository,
    probe_environment,
    reachability_probes,
    run_probes,
    unreachable,
)

PYTHON_FIND_TIMEOUT_S = 30.0
#: What one case needs on disk while it runs: a checkout and a venv holding both SDKs.
CASE_DISK_BYTES = 400 * 1024 * 1024


def repository_probes(cases: Sequence[Case], cache: Path | None) -> tuple[list[Probe], list[str]]:
    """``git ls-remote`` for each repository not already in the cache.

    Returns the probes and the cases the cache already answers for.
    """
    repositories = [Repository(case.id, case.repo, case.full_name) for case in cases if case.repo]
    return reachability_probes(repositories, cache)


def interpreter_probes(cases: Sequence[Case], policy: str, uv: str) -> list[Probe]:
    """``uv python find`` for each distinct key, as the policy turns it into a request."""
    probes: list[Probe] = []
    for case in cases:
        if not case.python:
            continue
        try:
            key = parse_interpreter_key(case.python)
        except ValueError as exc:
            probes.append(Probe(case.id, (), str(exc)))
            continue
        request = case.python if policy == "exact" else minor_request(key)
        hint = " (--bench-interpreter=minor uses a local build of the same minor)" if policy == "exact" else ""
        probes.append(
            Probe(
                case.id,
                (uv, "python", "find", "--no-config", "--no-python-downloads", request),
                f"interpreter {case.python} does not resolve under --bench-interpreter={policy}{hint}",
            )
        )
    return probes


def disk_problem(
    root: Path, cases: int, keep_all: bool, workers: int, free: Callable[[Path], int] | None = None
) -> str | None:
    """One line when the work root's disk has no room for the round's estimate; else None."""
    if cases == 0:
        return None
    at = Path(root)
    while not at.exists() and at != at.parent:
        at = at.parent
    available = (free or (lambda p: shutil.disk_usage(p).free))(at)
    running = cases if keep_all else min(cases, max(1, workers))
    needed = running * CASE_DISK_BYTES
    if available >= needed:
        return None
    return (
        f"disk: {available // 2**20} MiB free under {at}, the round needs about {needed // 2**20} MiB "
        f"({running} case(s) on disk at once)"
    )


def _matched(probes: Sequence[Probe], lines: Sequence[str]) -> list[tuple[Probe, str]]:
    """Pair each failure line with its probe (lines start with the probe's case id)."""
    pairs: list[tuple[Probe, str]] = []
    remaining = list(lines)
    for probe in probes:
        for line in remaining:
            if line.startswith(f"{probe.case}: {probe.failure}"):
                pairs.append((probe, line))
                remaining.remove(line)
                break
    return pairs


def _preflight_root(context: RoundContext) -> tuple[Path, dict[str, str]]:
    """Where the probes log, and the environment they run under."""
    root = Path(context.work_root) / "preflight" / context.round_label
    return root, probe_environment(root / "home", dict(NO_INTERPRETER_DOWNLOADS))


def _interpreter_failures(
    probes: Sequence[Probe], context: RoundContext, executor: Executor
) -> dict[tuple[str, ...], str]:
    """Each distinct interpreter request that does not resolve, with why."""
    root, env = _preflight_root(context)
    search = [Path(p) for p in context.python_search]
    python_env = {**env, "PATH": discovery_path(env.get("PATH"), search)}
    distinct = list({probe.argv: probe for probe in probes if probe.argv}.values())
    failed = run_probes(distinct, executor, logs=root / "python", env=python_env, timeout=PYTHON_FIND_TIMEOUT_S)
    return {probe.argv: line.split(": ", 1)[1] for probe, line in _matched(distinct, failed)}


class EarlyInterpreters:
    """The interpreter probes of every case a round may run, started on a thread of their own as the
    session starts: under xdist the preflight runs when the first worker has collected, and the cases
    wait for it; the probes (``uv python find``, 0.2 to 0.3 s) then overlap the workers' start.

    A preflight whose requests are all among these waits for the answers; any other runs its own.
    """

    def __init__(self, cases: Sequence[Case], context: RoundContext, executor: Executor | None = None) -> None:
        probes = interpreter_probes(cases, context.interpreter_policy, uv_binary())
        self.argvs = frozenset(probe.argv for probe in probes if probe.argv)
        self._answers: dict[tuple[str, ...], str] | None = None
        self._done = threading.Event()

        def probe() -> None:
            try:
                self._answers = _interpreter_failures(probes, context, executor or ProcessExecutor())
            except Exception:  # the preflight then probes for itself and says what failed
                self._answers = None
            finally:
                self._done.set()

        # A daemon: a session stopped before its preflight does not wait for the probes to end.
        threading.Thread(target=probe, name="obelize-bench-preflight", daemon=True).start()

    def answers(self, needed: Iterable[tuple[str, ...]]) -> dict[tuple[str, ...], str] | None:
        """The failures among ``needed`` (waiting for the probes); None when they did not probe them all."""
        if not set(needed) <= self.argvs:
            return None
        self._done.wait()
        return self._answers


def run_preflight(
    cases: Sequence[Case],
    context: RoundContext,
    *,
    executor: Executor | None = None,
    workers: int = 1,
    keep_all: bool = False,
    early: EarlyInterpreters | None = None,
) -> list[str]:
    """Every problem that would stop the round, one line each; empty when it can run."""
    executor = executor or ProcessExecutor()
    root, env = _preflight_root(context)
    cache = Path(context.repo_cache) if context.repo_cache else None
    repos, _ = repository_probes(cases, cache)
    problems = run_probes(repos, executor, logs=root / "git", env=env, timeout=LS_REMOTE_TIMEOUT_S)
    per_case = interpreter_probes(cases, context.interpreter_policy, uv_binary())
    answered = None if early is None else early.answers(probe.argv for probe in per_case if probe.argv)
    why = answered if answered is not None else _interpreter_failures(per_case, context, executor)
    for probe in per_case:
        if not probe.argv:
            problems.append(f"{probe.case}: {probe.failure}")
        elif probe.argv in why:
            problems.append(f"{probe.case}: {why[probe.argv]}")
    disk = disk_problem(Path(context.work_root), len(cases), keep_all, workers)
    return [*one_line_per_case(problems, [case.id for case in cases]), *([disk] if disk else [])]


def one_line_per_case(problems: Sequence[str], order: Sequence[str]) -> list[str]:
    """Join each case's problems (``"<case>: <problem>"``) into one line, in the cases' order."""
    by_case: dict[str, list[str]] = {}
    for line in problems:
        case, _, problem = line.partition(": ")
        by_case.setdefault(case, []).append(problem)
    return [f"{case}: {'; '.join(by_case[case])}" for case in order if case in by_case]


def stop_unless_reachable(config: pytest.Config, repositories: list[Any], cache: Path | None, root: Path) -> None:
    """Exit with EXIT_PREFLIGHT and one line per repository that can be neither fetched nor found in
    the cache: a session that went on could only measure infrastructure errors."""
    problems = unreachable(repositories, cache, root)
    if not problems:
        return
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    for line in problems:
        if terminal is not None:
            terminal.write_line(f"preflight: {line}", red=True)
    pytest.exit(
        f"preflight failed for {len(problems)} repositories; nothing ran and nothing was published "
        "(--bench-repo-cache=DIR supplies them offline; --bench-no-preflight runs anyway)",
        returncode=EXIT_PREFLIGHT,
    )


__all__ = [
    "CASE_DISK_BYTES",
    "LS_REMOTE_TIMEOUT_S",
    "PARALLEL_PROBES",
    "EarlyInterpreters",
    "Probe",
    "disk_problem",
    "interpreter_probes",
    "one_line_per_case",
    "repository_probes",
    "run_preflight",
    "run_probes",
    "stop_unless_reachable",
]
