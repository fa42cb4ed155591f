"""Gate 1 measured beside the sample's, through the real plugin: another frame of labelled repositories
and a case file's cases, each with a repository named out of reach (``--bench-unreachable``).

The repositories are local git repositories (the same ones ``test_gate1_plugin`` builds); obelize is real.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.helpers import rounds
from tests.helpers.gitrepo import make_repo
from tests.helpers.project import PROJECT
from tests.plugin.test_gate1_plugin import ALPHA, PLAIN, QUIET, G, _key, _repo_row

WHY = "no snapshot of the repository can be had"
GONE_SHA = "f" * 40


def _gate1(pytester: pytest.Pytester, tmp_path: Path, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        "--bench-gate1",
        f"--bench-results={tmp_path / 'results'}",
        f"--bench-work={tmp_path / 'work'}",
        "-p",
        "no:cacheprovider",
        *args,
    )


@pytest.fixture
def project(pytester: pytest.Pytester, tmp_path: Path) -> Path:
    """The sample (three repositories, two labelled) and a second frame of the two labelled ones and one
    repository out of reach, with the pin list naming it."""
    alpha = make_repo(tmp_path / "origin" / "alpha", ALPHA)
    quiet = make_repo(tmp_path / "origin" / "quiet", QUIET)
    plain = make_repo(tmp_path / "origin" / "plain", PLAIN)
    folder = pytester.path / "cases" / "gate1"  # where the project keeps the sample's Gate 1
    (folder / "labels").mkdir(parents=True)
    rows = [_repo_row("o/alpha", alpha.url, alpha.head), _repo_row("o/quiet", quiet.url, quiet.head)]
    sample = {"term": "generativeai", "repositories": [*rows, _repo_row("o/plain", plain.url, plain.head)]}
    (folder / "sample.yaml").write_text(yaml.safe_dump(sample, sort_keys=False), encoding="utf-8")
    gone = _repo_row("o/gone", (tmp_path / "origin" / "gone").as_uri(), GONE_SHA)
    labelled = {"term": "generativeai", "repositories": [*rows, gone]}
    (folder / "labelled.yaml").write_text(yaml.safe_dump(labelled, sort_keys=False), encoding="utf-8")
    alpha_key = _key(
        "o/alpha", alpha.url, alpha.head, [("app.py", 3, "import", G), ("app.py", 5, "call", f"{G}.configure")]
    )
    quiet_key = _key("o/quiet", quiet.url, quiet.head, [("app.py", 4, "call", f"{G}.configure")])
    for name, key in (("o__alpha", alpha_key), ("o__quiet", quiet_key)):
        (folder / "labels" / f"{name}.yaml").write_text(yaml.safe_dump(key, sort_keys=False), encoding="utf-8")
    # the project's case file, which the summary's figures and pages read beside the measurements
    shutil.copy(PROJECT / "cases" / "cases.yaml", pytester.path / "cases" / "cases.yaml")
    (pytester.path / "pins.tsv").write_text(
        f"full_name\tsha\tstate\no/alpha\t{alpha.head}\tpacked\no/gone\t{GONE_SHA}\t{WHY}\n", encoding="utf-8"
    )
    return folder


def test_another_frame_is_published_beside_the_sample_with_what_was_out_of_reach(
    pytester: pytest.Pytester, project: Path, tmp_path: Path
) -> None:
    first = _gate1(pytester, tmp_path, f"--bench-frame={project / 'sample.yaml'}")
    assert first.ret == 0, first.stdout.str()
    sample = (tmp_path / "results" / "gate1" / "scan.json").read_bytes()
    result = _gate1(pytester, tmp_path, f"--bench-frame={project / 'labelled.yaml'}", "--bench-unreachable=pins.tsv")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        ["not run, out of reach here (1 repositories, --bench-unreachable):", f"  o/gone: {WHY}"]
    )
    assert (tmp_path / "results" / "gate1" / "scan.json").read_bytes() == sample
    beside = json.loads((tmp_path / "results" / "gate1" / "labelled" / "scan.json").read_text(encoding="utf-8"))
    assert beside["source"] == "cases/gate1/labelled.yaml" and beside["source_kind"] == "frame"
    assert beside["unreachable"] == {"o/gone": WHY}
    assert [repo["full_name"] for repo in beside["scanned"]] == ["o/alpha", "o/quiet"]
    document = (tmp_path / "results" / "BENCHMARK_RESULTS.md").read_text(encoding="utf-8")
    assert "<!-- gate1:begin" in document and "<!-- gate1-labelled:begin" in document
    block = document.split("<!-- gate1-labelled:begin")[1]
    assert "### Gate 1: scan precision and recall, over `cases/gate1/labelled.yaml`" in block
    assert "**Measured here: 2 of 3 repositories.**" in block and f"* `o/gone`: {WHY}" in block
    # against the sample's own scan: the key's two rows found, five findings it does not claim
    assert "#### Against the sample's published Gate 1 (obelize 0.8.0)" in block
    assert "| `o/alpha` | 2 / 5 / 0 | 2 / 5 / 0 | no change |" in block
    assert "figures/gate1-labelled-precision-recall.svg" in block
    assert (tmp_path / "results" / "figures" / "gate1-labelled-precision-recall.svg").is_file()


def test_a_case_file_s_cases_are_matched_against_their_own_keys(pytester: pytest.Pytester, tmp_path: Path) -> None:
    reached = rounds.case_row_from_fixture("clean", "ok", tmp_path)
    gone = rounds.unfetchable_rows(["gone"], tmp_path / "gone-origin")[0]
    gone["id"], gone["full_name"] = "gone__clean", "gone/clean"
    cases = rounds.write_case_file(pytester.path / "cases" / "round.yaml", [reached, gone])
    # the project's case file, which the summary's figures and pages read beside the measurements
    shutil.copy(PROJECT / "cases" / "cases.yaml", pytester.path / "cases" / "cases.yaml")
    (pytester.path / "pins.tsv").write_text(
        f"full_name\tsha\tstate\ngone/clean\t{gone['sha']}\t{WHY}\n", encoding="utf-8"
    )
    result = _gate1(pytester, tmp_path, f"--bench-gate1-cases={cases}", "--bench-unreachable=pins.tsv")
    assert result.ret == 0, result.stdout.str()
    beside = json.loads((tmp_path / "results" / "gate1" / "round" / "scan.json").read_text(encoding="utf-8"))
    assert beside["source"] == "cases/round.yaml" and beside["source_kind"] == "cases"
    assert beside["unreachable"] == {"gone/clean": WHY} and [r["full_name"] for r in beside["scanned"]] == ["ok/clean"]
    block = (tmp_path / "results" / "BENCHMARK_RESULTS.md").read_text(encoding="utf-8").split("gate1-round:begin")[1]
    assert "answer keys of the cases of `cases/round.yaml` (each case's ground truth)" in block
    labelled = len([row for row in reached["ground_truth"]["call_sites"] if row["kind"] != "dynamic"])
    assert f"| **All labelled** | {labelled} |" in block


def test_cases_and_a_frame_are_one_or_the_other(pytester: pytest.Pytester, tmp_path: Path) -> None:
    result = _gate1(pytester, tmp_path, "--bench-gate1-cases=c.yaml", "--bench-frame=f.yaml")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--bench-gate1-cases names what Gate 1 scans instead of --bench-frame*"])
