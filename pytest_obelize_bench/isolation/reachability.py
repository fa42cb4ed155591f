"""Can the repositories be fetched at all? ``git ls-remote`` for each one not in the cache.

Shared by a round's preflight and by Gate 1's and the dry run's: a session whose repositories
cannot be reached would only produce a column of infrastructure errors, so it stops within
seconds instead, with exit status ``EXIT_PREFLIGHT`` and one line per repository. Every command
goes through the executor, argv only, with the URL after ``--end-of-options`` so no value of a
case file or frame can become a git option.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from pytest_obelize_bench.isolation.executor import Completed, Executor, ProcessExecutor, step_environment

#: The exit status of a session stopped by its preflight (nothing ran).
EXIT_PREFLIGHT = 4
#: How many probes run at once: enough to hide network latency, few enough to be polite.
PARALLEL_PROBES = 8
LS_REMOTE_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Probe:
    """One command to run for one case, and the line to print when it fails."""

    case: str
    argv: tuple[str, ...]
    failure: str


@dataclass(frozen=True)
class Repository:
    """What the reachability check needs of a repository: its item id, URL and ``owner/name``."""

    id: str
    url: str
    full_name: str | None = None


def last_line(completed: Completed) -> str:
    """The last non-empty line a probe printed (or why it printed none), at most 160 characters."""
    if completed.timed_out:
        return "no answer in time"
    if completed.launch_error:
        return completed.launch_error
    lines = [line.strip() for line in completed.output().splitlines() if line.strip()]
    text = lines[-1] if lines else f"exit {completed.exit_code}"
    return text if len(text) <= 160 else text[:157] + "..."


def is_cached(cache: Path | None, full_name: str | None) -> bool:
    """Whether the repository cache holds a bare clone of ``owner/name``."""
    if cache is None or not full_name:
        return False
    owner, _, name = full_name.partition("/")
    return (Path(cache) / owner / f"{name}.git" / "HEAD").is_file()


def reachability_probes(repositories: Sequence[Repository], cache: Path | None) -> tuple[list[Probe], list[str]]:
    """``git ls-remote`` for each repository the cache does not hold; and the ids it holds."""
    probes: list[Probe] = []
    cached: list[str] = []
    for repo in repositories:
        if is_cached(cache, repo.full_name):
            cached.append(repo.id)
            continue
        probes.append(
            Probe(
                repo.id,
                ("git", "ls-remote", "--quiet", "--end-of-options", repo.url, "HEAD"),
                f"repository {repo.url} is unreachable",
            )
        )
    return probes, cached


def run_probes(
    probes: Sequence[Probe], executor: Executor, *, logs: Path, env: dict[str, str], timeout: float
) -> list[str]:
    """Run the probes in parallel (bounded); one line per failing probe, in the probes' order."""
    logs.mkdir(parents=True, exist_ok=True)

    def one(index: int, probe: Probe) -> str | None:
        if not probe.argv:
            return f"{probe.case}: {probe.failure}"
        done = executor.run(
            list(probe.argv), cwd=logs, env=env, timeout=timeout, log=logs / f"{index:03d}-{probe.case}.log"
        )
        if done.exit_code == 0 and not done.timed_out:
            return None
        return f"{probe.case}: {probe.failure}: {last_line(done)}"

    with ThreadPoolExecutor(max_workers=PARALLEL_PROBES) as pool:
        results = list(pool.map(lambda pair: one(*pair), enumerate(probes)))
    return [line for line in results if line is not None]


def probe_environment(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The allow-listed environment of a probe, with a HOME of its own and no git prompt."""
    home.mkdir(parents=True, exist_ok=True)
    return step_environment(os.environ, home=home, extra={"GIT_TERMINAL_PROMPT": "0", **(extra or {})})


def unreachable(
    repositories: Sequence[Repository], cache: Path | None, root: Path, executor: Executor | None = None
) -> list[str]:
    """One line per repository neither cached nor answering ``git ls-remote``; logs under ``root``."""
    probes, _ = reachability_probes(repositories, cache)
    if not probes:
        return []
    env = probe_environment(root / "home")
    return run_probes(probes, executor or ProcessExecutor(), logs=root / "git", env=env, timeout=LS_REMOTE_TIMEOUT_S)


__all__ = [
    "EXIT_PREFLIGHT",
    "LS_REMOTE_TIMEOUT_S",
    "PARALLEL_PROBES",
    "Probe",
    "Repository",
    "is_cached",
    "last_line",
    "probe_environment",
    "reachability_probes",
    "run_probes",
    "unreachable",
]
