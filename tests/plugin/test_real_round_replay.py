"""Two real round-1 cases replayed from their snapshots with obelize 0.1.0 at round 1's start, through the
real plugin: each record must equal the one round 1 published, field by field, but for what names the
machine and the moment (where, when, how long).

The repositories come from bare snapshots (``$OBELIZE_BENCH_SNAPSHOTS``, else ``../shared/snapshots``
beside the project), filled into a repository cache as ``benchmarks/snapshot_cache.py`` does; git, uv,
the package index and obelize 0.1.0 are real.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import rounds
from tests.helpers.project import PROJECT

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("index_uv_cache")]

CASES = ("000wan__ara-ai-bot", "Momen2410__Question-Answering-ChatBot-Using-Gemini1.5")
UPSTREAM_CASES = PROJECT / "tests" / "data" / "upstream" / "cases.yaml"
ROUND_1 = PROJECT / "results" / "round-1"
#: What says where and when a record was made, not what was measured: never compared.
MACHINE_FIELDS = {
    "measurements": {"runtime_seconds"},
    "provenance": {"machine", "os", "python_build", "python_executable", "run_at", "obelize_commit"},
}


def snapshots() -> Path | None:
    """The snapshots folder: ``$OBELIZE_BENCH_SNAPSHOTS``, else ``../shared/snapshots`` beside the project."""
    given = os.environ.get("OBELIZE_BENCH_SNAPSHOTS")
    folder = Path(given) if given else PROJECT.parent / "shared" / "snapshots"
    return folder if folder.is_dir() else None


def _comparable(record: dict[str, Any]) -> dict[str, Any]:
    """The record less what names the machine and the moment, and less fields round 1's records lack."""
    out = {key: value for key, value in record.items() if key in {"case", "tier", "control", "split", "error"}}
    for part, dropped in MACHINE_FIELDS.items():
        out[part] = {key: value for key, value in record[part].items() if key not in dropped}
    return out


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    folder = snapshots()
    if folder is None:
        pytest.skip("no repository snapshots: set OBELIZE_BENCH_SNAPSHOTS or put them at ../shared/snapshots")
    root = tmp_path_factory.mktemp("replay")
    upstream = yaml.safe_load(UPSTREAM_CASES.read_text(encoding="utf-8"))
    rows = [row for row in upstream["cases"] if row["id"] in CASES]
    assert sorted(row["id"] for row in rows) == sorted(CASES)
    case_file = root / "project" / "cases" / "cases.yaml"
    case_file.parent.mkdir(parents=True)
    head = {key: value for key, value in upstream.items() if key not in ("cases", "controls")}
    case_file.write_text(yaml.safe_dump({**head, "cases": rows, "controls": []}, sort_keys=False), encoding="utf-8")
    cache = root / "repo-cache"
    filled = subprocess.run(
        [sys.executable, str(PROJECT / "benchmarks" / "snapshot_cache.py"), str(cache), "--snapshots", str(folder),
         str(case_file)],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert filled.returncode == 0, filled.stdout + filled.stderr
    started = json.loads((ROUND_1 / "runs" / "imported-upstream" / "run.json").read_text(encoding="utf-8"))
    done = rounds.run_pytest(
        case_file.parent.parent,
        "--bench-round=1",
        "--bench-allow-dirty",
        "--bench-interpreter=minor",
        f"--bench-repo-cache={cache}",
        f"--bench-results={root / 'results'}",
        f"--bench-work={root / 'work'}",
        "--obelize=obelize==0.1.0",
        f"--exclude-newer={started['started_at']}",
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return rounds.read_records(rounds.only_run(root / "results" / "round-1"))


@pytest.mark.parametrize("case", CASES)
def test_a_real_round_1_case_replayed_gives_the_published_record(replayed: dict[str, Any], case: str) -> None:
    published = json.loads((ROUND_1 / f"{case}.json").read_text(encoding="utf-8"))
    now = replayed[case]
    assert now["provenance"]["obelize_version"] == "0.1.0"
    mine, theirs = _comparable(now), _comparable(published)
    for part in ("measurements", "provenance"):
        for key in sorted(theirs[part]):
            assert mine[part].get(key) == theirs[part][key], f"{case}: {part}.{key}"
    assert {key: mine[key] for key in theirs if key not in MACHINE_FIELDS} == {
        key: theirs[key] for key in theirs if key not in MACHINE_FIELDS
    }
