"""Template environments in a real round: built once per key, viewed by later cases, never leaked into.

One round of seven local repositories (real git, real uv, the sandbox where bwrap works), then a
second run of one case against a template whose legacy SDK was tampered with.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_obelize_bench.case.templates import TEMPLATES_DIR
from tests.helpers import rounds
from tests.helpers.rounds import run_pytest
from tests.helpers.sandbox import bwrap_probe

pytestmark = pytest.mark.usefixtures("index_uv_cache")

CUTOFF = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
#: The suite of ``p2``: it writes into its own venv, a new file and over one the template holds.
LEAK = (
    "import pathlib, sys\n"
    "prefix = pathlib.Path(sys.prefix)\n"
    "(prefix / 'leaked-by-p2.txt').write_text('p2')\n"
    "(prefix / 'pyvenv.cfg').write_text('overwritten by p2\\n')\n"
    "print('ok')\n"
)
#: The suite of ``p3``, run after ``p2`` on the same template: it must see neither write.
SEES_NO_LEAK = (
    "import pathlib, sys\n"
    "prefix = pathlib.Path(sys.prefix)\n"
    "assert not (prefix / 'leaked-by-p2.txt').exists(), 'p2 leaked a file'\n"
    "assert 'overwritten' not in (prefix / 'pyvenv.cfg').read_text(), 'p2 leaked a write'\n"
    "print('ok')\n"
)


Files = dict[str, str | bytes | None]


def _row(root: Path, owner: str, files: Files | None = None, **overrides: Any) -> dict[str, Any]:
    row = rounds.case_row_from_fixture("trap-vertex", owner, root / owner, **overrides)
    return rounds.with_files(row, root / owner, files) if files else row


def _round(project: Path, work: Path, results: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_pytest(
        project,
        "--bench-round=2",
        "--bench-allow-dirty",
        "--bench-interpreter=minor",
        f"--exclude-newer={CUTOFF}",
        f"--bench-work={work}",
        f"--bench-results={results}",
        "-q",
        *extra,
    )


@pytest.fixture(scope="module")
def templated_round(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, Any]]]:
    root = tmp_path_factory.mktemp("templates")
    requirements = "uv pip install -r requirements.txt"
    cases = [
        _row(root, "p1"),
        _row(root, "p2", {"leak.py": LEAK}, test_cmd="python leak.py", has_test_files=True),
        _row(root, "p3", {"check.py": SEES_NO_LEAK}, test_cmd="python check.py", has_test_files=True),
        _row(root, "r1", {"requirements.txt": "pytest==8.3.3\n"}, install=[requirements]),
        _row(root, "r2", {"requirements.txt": "pytest==8.3.3\n"}, install=[requirements]),
        _row(root, "r3", {"requirements.txt": "pytest==8.3.3  # the same pin, another file\n"}, install=[requirements]),
    ]
    project = root / "project"
    rounds.write_case_file(project / "cases" / "cases.yaml", cases)
    done = _round(project, root / "work", root / "results")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return root, rounds.read_records(rounds.only_run(root / "results" / "round-2"))


def _view() -> set[str]:
    """The view a reusing case gets here: an overlay where bwrap mounts one, else a copy."""
    probe = bwrap_probe()
    return {"overlay"} if probe.works and probe.overlay else {"copy"}


def test_the_first_case_of_a_key_builds_its_template_and_the_next_ones_view_it(templated_round: Any) -> None:
    root, records = templated_round
    first, second, third = (records[f"{owner}__trap-vertex"]["provenance"] for owner in ("p1", "p2", "p3"))
    assert first["env_view"] == "built"
    assert {second["env_view"], third["env_view"]} == _view()
    key = first["env_template"]
    assert key and second["env_template"] == key and third["env_template"] == key
    assert (root / "work" / TEMPLATES_DIR / key / "template.json").is_file()
    names = [step["name"] for step in records["p2__trap-vertex"]["steps"]]
    # No uv venv, no resolve probe, no install: the template holds them.  The check stays per case.
    assert "resolve" not in names and "install-from" not in names
    assert names[names.index("install-from-check") - 1] in ("venv", "fetch")
    assert second["sdk_from"] == "0.8.6" and second["packages_sha256"] == first["packages_sha256"]
    assert second["python_used"] == first["python_used"]


def test_a_write_to_one_case_s_environment_reaches_no_other_case_nor_the_template(templated_round: Any) -> None:
    root, records = templated_round
    assert records["p2__trap-vertex"]["measurements"]["tests_baseline"]["status"] == "pass"
    # p3 ran after p2 on the same template, and its suite looked for p2's writes.
    assert records["p3__trap-vertex"]["measurements"]["tests_baseline"]["status"] == "pass"
    template = root / "work" / TEMPLATES_DIR / records["p1__trap-vertex"]["provenance"]["env_template"] / "venv"
    assert not (template / "leaked-by-p2.txt").exists()
    assert "overwritten" not in (template / "pyvenv.cfg").read_text()


def test_a_changed_requirements_file_builds_a_new_template(templated_round: Any) -> None:
    _, records = templated_round
    r1, r2, r3 = (records[f"{owner}__trap-vertex"]["provenance"] for owner in ("r1", "r2", "r3"))
    assert r1["env_view"] == "built" and r2["env_view"] in _view() and r2["env_template"] == r1["env_template"]
    assert r3["env_view"] == "built" and r3["env_template"] not in (None, r1["env_template"])
    assert r1["env_template"] != records["p1__trap-vertex"]["provenance"]["env_template"]
    assert all(records[f"{o}__trap-vertex"]["error"] is None for o in ("r1", "r2", "r3"))


def test_a_wrong_version_in_a_reused_template_is_still_a_version_mismatch(templated_round: Any) -> None:
    root, records = templated_round
    key = records["p1__trap-vertex"]["provenance"]["env_template"]
    venv = root / "work" / TEMPLATES_DIR / key / "venv"
    (metadata,) = venv.glob("lib/python*/site-packages/google_generativeai-0.8.6.dist-info/METADATA")
    text = metadata.read_text(encoding="utf-8").replace("Version: 0.8.6", "Version: 0.8.5", 1)
    metadata.unlink()  # a link into the uv cache: replaced, never written through
    metadata.write_text(text, encoding="utf-8")
    project = root / "project"
    done = _round(project, root / "work", root / "results-again", "-k", "p1__")
    records = rounds.read_records(rounds.only_run(root / "results-again" / "round-2"))
    record = records["p1__trap-vertex"]
    assert record["provenance"]["env_view"] in _view() and record["provenance"]["env_template"] == key
    assert record["error"]["reason"] == "version_mismatch", done.stdout[-2000:]
    assert record["error"]["step"] == "install-from-check"
    assert "pinned 0.8.6, installed 0.8.5" in record["error"]["detail"]
