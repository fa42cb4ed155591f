"""Without the sandbox, a suite that writes through every file its venv exposes changes no other case.

Two local repositories shaped like the real cases, in one round with ``--bench-sandbox=none``:
the first one's suite appends to every file under its venv's site-packages, following any link;
the second one's suite checks every installed file against the hash its wheel's RECORD gives.
The second case shares the first's environment template, and a second round runs it again, so
both read what the first could have reached: the template, the uv cache and its links. The round
uses a uv cache of its own, so a failure here cannot poison the suite's shared one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import rounds

MARK = b"\n# written by a hostile suite\n"

HOSTILE = f"""
import sys
from pathlib import Path


def test_write_through_every_package_file():
    site = next(Path(sys.prefix).glob("lib/python*/site-packages"))
    written = 0
    for path in site.rglob("*"):
        if path.is_file():  # a link is followed: whatever it points at is written
            with open(path, "ab") as handle:
                handle.write({MARK!r})
            written += 1
    assert written > 100
"""

CHECKER = """
import base64
import csv
import hashlib
import sys
from pathlib import Path


def test_every_installed_file_is_what_its_wheel_says():
    site = next(Path(sys.prefix).glob("lib/python*/site-packages"))
    checked = 0
    for record in site.glob("*.dist-info/RECORD"):
        for row in csv.reader(record.read_text(encoding="utf-8").splitlines()):
            if len(row) < 2 or not row[1].startswith("sha256=") or row[0].startswith(".."):
                continue
            digest = hashlib.sha256((site / row[0]).read_bytes()).digest()
            assert base64.urlsafe_b64encode(digest).rstrip(b"=").decode() == row[1][7:], row[0]
            checked += 1
    assert checked > 100
"""


def _baseline(project: Path, case: str) -> dict[str, object]:
    records = rounds.read_records(rounds.run_folders(project / "results" / "round-2")[-1])
    measurements = records[case]["measurements"]
    assert isinstance(measurements, dict)
    baseline = measurements["tests_baseline"]
    assert isinstance(baseline, dict)
    return baseline


@pytest.mark.usefixtures("index_uv_cache")
def test_a_suite_writing_through_its_venv_reaches_no_other_case_nor_a_later_round(tmp_path: Path) -> None:
    project = tmp_path / "project"
    hostile = rounds.case_row_from_fixture("clean", "aaa", tmp_path / "a")
    hostile = rounds.with_files(hostile, tmp_path / "a", {"tests/test_hostile.py": HOSTILE})
    checker = rounds.case_row_from_fixture("clean", "zzz", tmp_path / "z")
    checker = rounds.with_files(checker, tmp_path / "z", {"tests/test_installed_files.py": CHECKER})
    rounds.write_case_file(project / "cases" / "cases.yaml", [hostile, checker])
    cache = tmp_path / "uv-cache"
    common = ["--bench-round=2", "--bench-allow-dirty", "--bench-interpreter=minor", "--bench-sandbox=none",
              f"--bench-work={tmp_path / 'work'}", "--bench-no-summary"]  # fmt: skip
    first = rounds.run_pytest(project, *common, env={"UV_CACHE_DIR": str(cache)})
    assert first.returncode == 0, first.stdout[-3000:]
    assert "obelize-bench: isolation: unsandboxed; each case's venv copies its packages" in first.stdout
    assert _baseline(project, "aaa__clean")["status"] == "pass", first.stdout[-3000:]  # it did write
    assert _baseline(project, "zzz__clean")["status"] == "pass", first.stdout[-3000:]
    records = rounds.read_records(rounds.run_folders(project / "results" / "round-2")[-1])
    assert records["zzz__clean"]["provenance"]["sandbox"] == "none"
    assert records["zzz__clean"]["provenance"]["env_view"] == "copy"  # the first case's template
    # a later round, from the same templates and cache, reads the same bytes
    second = rounds.run_pytest(project, *common, "-k", "zzz", env={"UV_CACHE_DIR": str(cache)})
    assert second.returncode == 0, second.stdout[-3000:]
    assert _baseline(project, "zzz__clean")["status"] == "pass", second.stdout[-3000:]
    # The hostile case built the template (its venv is its own), so it installed the new SDK itself;
    # the checker's copy was still that template, so the install over it is a layer of copied files,
    # which its after suite, run on that layer applied to a fresh copy in the second round, finds as
    # their wheels say.
    hostile_after = records["aaa__clean"]["provenance"]
    assert hostile_after["env_template_after"] is None, hostile_after
    later = rounds.read_records(rounds.run_folders(project / "results" / "round-2")[-1])["zzz__clean"]
    assert later["provenance"]["env_template_after"] is not None, later["provenance"]
    assert "install-to" not in [step["name"] for step in later["steps"]]
    assert later["measurements"]["tests_after"]["status"] == "pass", later["measurements"]
    poisoned = [p for p in cache.rglob("*.py") if p.is_file() and not p.is_symlink() and MARK in p.read_bytes()]
    assert poisoned == []
    assert json.dumps(records["aaa__clean"]["provenance"]).count("none") >= 1
