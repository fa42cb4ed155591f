"""Measure what the sandbox adds to a step: the same steps run N times with and without bwrap.

Run: .venv/bin/python benchmarks/sandbox_cost.py [N]   (default N = 20)

Two steps a case really runs, through the harness's own executors and a case layout built as a
round builds it: a version check (``python -I -c`` reading importlib.metadata, the shortest step
there is, so the worst ratio) and a suite (``python -m pytest -q`` over a small test file, the
typical step that runs a repository's code).  Runs alternate between the two executors so drift
in the machine's load hits both alike.  Prints the median of each, the extra time per step and
the ratio.  It needs a working bwrap and touches no network.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TESTS = """\
import json

def test_round_trip():
    assert json.loads(json.dumps({"a": [1, 2]})) == {"a": [1, 2]}

def test_text():
    assert "gemini".upper() == "GEMINI"

def test_numbers():
    assert sum(range(100)) == 4950
"""


def main(count: int = 20) -> None:
    from pytest_obelize_bench.case.environment import VERSION_PROGRAM
    from pytest_obelize_bench.isolation.executor import (
        Executor,
        ProcessExecutor,
        step_environment,
    )
    from pytest_obelize_bench.isolation.sandbox import (
        SandboxExecutor,
        case_layout,
        harness_paths,
        probe_bwrap,
    )
    from pytest_obelize_bench.isolation.workspace import prepare_workspace

    probe = probe_bwrap()
    if not probe.works or probe.program is None:
        raise SystemExit(f"bwrap cannot sandbox here: {probe.problem}")
    with tempfile.TemporaryDirectory(prefix="obelize-bench-cost-") as folder:
        root = Path(folder)
        space = prepare_workspace(root / "work", "round-2", "cost")
        space.checkout.mkdir()
        (space.checkout / "test_small.py").write_text(TESTS, encoding="utf-8")
        env = step_environment(
            {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}, home=space.home, extra={"PYTHONDONTWRITEBYTECODE": "1"}
        )
        paths = harness_paths(
            project_root=str(Path(__file__).resolve().parents[1]),
            results=str(Path(__file__).resolve().parents[1] / "results"),
            work_root=str(root / "work"),
        )
        layout = case_layout(
            paths,
            checkout=space.checkout,
            home=space.home,
            tmp=space.tmp,
            junit=space.logs / "junit",
            env=env,
            uv_cache=str(root / "work" / "uv-cache"),
            suites_network=False,
            offline=False,
        )
        plain = ProcessExecutor()
        executors: dict[str, Executor] = {
            "none": plain,
            "bwrap": SandboxExecutor(plain, program=probe.program, layout=layout),
        }
        steps = {
            "version check": [sys.executable, "-I", "-c", VERSION_PROGRAM, "pytest"],
            "suite (3 tests)": [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_small.py"],
        }
        print(f"bwrap {probe.version}, {count} runs of each step with and without it (medians)")
        for label, argv in steps.items():
            times: dict[str, list[float]] = {"none": [], "bwrap": []}
            for index in range(count + 1):
                for mode, executor in executors.items():
                    started = time.perf_counter()
                    done = executor.run(
                        argv,
                        cwd=space.checkout,
                        env=env,
                        timeout=120,
                        log=space.logs / "01-baseline.log",
                        step="baseline",
                    )
                    elapsed = time.perf_counter() - started
                    if done.exit_code != 0:
                        raise SystemExit(f"{label} under {mode} exited {done.exit_code}:\n{done.output()[-2000:]}")
                    if index:  # the first round warms the page cache for both
                        times[mode].append(elapsed)
            bare, boxed = statistics.median(times["none"]), statistics.median(times["bwrap"])
            print(
                f"  {label:16} without {bare * 1000:7.1f} ms   with {boxed * 1000:7.1f} ms   "
                f"extra {(boxed - bare) * 1000:6.1f} ms per step   ratio {boxed / bare:.2f}"
            )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
