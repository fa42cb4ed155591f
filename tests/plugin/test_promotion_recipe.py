"""README's "Promoting a new obelize", pasted: two real rounds and the gate, ending in a decision;
then the same two runs as a history of releases (``obelize-bench history``).

The three commands run as written, from a project whose case file holds local repositories shaped
like the real ones (the fixtures' summariser, one case in the holdout), with three substitutions a
reader makes too: the candidate's pin for ``PATH_OR_PIN``, the two run ids the rounds printed for
``RUN_A`` and ``RUN_B``, and the harness's ``.venv`` for ``.venv`` (the project is a committed
folder of its own, as a clone is). Its policy is the shipped one but for ``min_n`` (three cases
here, not twenty). The gate must get past every rule about the evidence, which is what the recipe
is for; what it then decides about two releases on three cases is not this test's business.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.helpers import rounds
from tests.helpers.doc_commands import section, shell_commands
from tests.helpers.gitrepo import git_env
from tests.helpers.project import PROJECT

README = PROJECT / "README.md"
CANDIDATE = "obelize==0.7.0"
#: The rules about the evidence: the recipe exists so that none of them stops the gate.
EVIDENCE_RULES = {
    "run_complete",
    "run_not_interrupted",
    "no_infrastructure_errors",
    "same_cases",
    "same_pins",
    "same_environment",
    "same_attempts",
    "min_runs",
    "evidence_age",
    "holdout_included",
    "preregistered",
    "no_rerun_tool_errors",
    "no_model",
    "distinct_candidate",
}


def recipe() -> list[str]:
    return shell_commands(section(README.read_text(encoding="utf-8"), "Promoting a new obelize"))


def test_the_recipe_is_two_rounds_on_shared_pins_and_the_gate() -> None:
    first, second, gate = recipe()
    for run in (first, second):
        assert "--bench-repeat=2" in run and "--bench-interpreter=minor" in run
        assert re.search(r"--exclude-newer=\S+", run)
    assert re.findall(r"--exclude-newer=\S+", first) == re.findall(r"--exclude-newer=\S+", second)
    assert "PATH_OR_PIN" in second and "RUN_A" in gate and "RUN_B" in gate


def run_ids(project: Path) -> list[str]:
    return [folder.name for folder in rounds.run_folders(project / "results" / "round-2")]


@pytest.mark.usefixtures("index_uv_cache")
def test_the_promotion_recipe_ends_in_a_decision_as_pasted(tmp_path: Path) -> None:
    if not (PROJECT / ".venv" / "bin" / "pytest").exists():
        pytest.skip("the recipe uses the project's .venv (the set-up of Start here)")
    project = tmp_path / "project"
    cases = [
        rounds.case_row_from_fixture("clean", "ann", tmp_path / "ann"),
        rounds.case_row_from_fixture("clean", "bob", tmp_path / "bob", split="holdout"),
        rounds.case_row_from_fixture("refused", "cy", tmp_path / "cy"),
    ]
    rounds.write_case_file(project / "cases" / "cases.yaml", cases)
    rounds.write_fixture_reviews(
        project / "cases" / "reviews" / "round-2.yaml", cases, {"ann__clean": "clean", "bob__clean": "clean"}
    )
    policy = (PROJECT / "cases" / "promotion.yaml").read_text(encoding="utf-8")
    (project / "cases" / "promotion.yaml").write_text(policy.replace("\nmin_n: 20\n", "\nmin_n: 3\n"))
    for git in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "cases"]):
        subprocess.run(["git", *git], cwd=project, env=git_env(), check=True, capture_output=True)
    environment = {**rounds.inner_environment(), "TMPDIR": str(tmp_path)}

    def paste(command: str) -> subprocess.CompletedProcess[str]:
        pasted = command.replace(".venv/bin/", f"{PROJECT}/.venv/bin/")
        shell = ["bash", "-c", pasted]
        return subprocess.run(
            shell, cwd=project, env=environment, capture_output=True, text=True, timeout=1500, check=False
        )

    first, second, gate = recipe()
    for command in (first, second.replace("PATH_OR_PIN", CANDIDATE)):
        done = paste(command)
        assert done.returncode == 0, f"{command}\n{done.stdout[-4000:]}\n{done.stderr[-2000:]}"
    old, new = sorted(run_ids(project))  # a run id starts with the time its session started
    done = paste(gate.replace("RUN_A", old).replace("RUN_B", new))
    assert done.returncode in (0, 1, 3), done.stdout + done.stderr
    (written,) = (project / "results" / "decisions").glob("*.json")
    document = json.loads(written.read_text(encoding="utf-8"))
    assert document["incumbent"]["tool_version"] == "0.8.0" and document["candidate"]["tool_version"] == "0.7.0"
    failed = {r["rule"] for r in document["reasons"] if not r["holds"]}
    assert not failed & (EVIDENCE_RULES | {"clean_trees"}), [r["text"] for r in document["reasons"] if not r["holds"]]
    # the same two runs as a history of releases: in version order, though 0.8.0 ran first
    done = paste(".venv/bin/obelize-bench history --round 2")
    assert done.returncode == 0, done.stdout + done.stderr
    history = json.loads((project / "results" / "round-2" / "history.json").read_text(encoding="utf-8"))
    assert [(r["label"], r["run"]) for r in history["releases"]] == [("0.7.0", new), ("0.8.0", old)]
    (step,) = history["steps"]
    assert (step["before"], step["after"]) == ("0.7.0", "0.8.0") and not history["left_out"]
    changed = {c["case"] for c in step["improved"] + step["regressed"]}
    for case in ("ann__clean", "bob__clean", "cy__refused"):
        found = paste(f".venv/bin/obelize-bench history --round 2 --find {case}")
        assert found.returncode == 0, found.stdout
        expected = f"{case}: first changed at obelize 0.8.0" if case in changed else f"{case}: the same tier and rows"
        assert expected in found.stdout, found.stdout
    assert paste(".venv/bin/obelize-bench summarize --check").returncode == 0
