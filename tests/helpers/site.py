"""A project whose published round 2 holds hostile evidence, for the results pages' tests.

``alpha__navamai`` wrote a patch that quotes script tags, an image with an ``onerror``, a run of
backticks longer than a fence, control bytes and a 5,000-character line, and its graded facts
withhold a row of a file whose name is markup; ``zeta__app`` errored with a detail that carries
script, a NUL byte and a very long line. Every hostile string would set the page's title to
``PWNED`` or mark its body if a browser ran it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from pytest_obelize_bench.casefile.cases import load_case_file
from pytest_obelize_bench.grading.graded_facts import Artefacts, Finding, PlanEdit, Withheld, artefacts_to_json
from pytest_obelize_bench.grading.record import ErrorInfo, Provenance
from pytest_obelize_bench.grading.tiers import tier
from pytest_obelize_bench.records.runs import run_folder
from pytest_obelize_bench.report.round.publish_round import publish_round
from tests.helpers import casefile
from tests.helpers.project import PROJECT
from tests.helpers.runs import all_cases, make_run, record, unsupported

SCRIPT = "<script>document.title='PWNED'</script>"
IMAGE = "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">"
LONG = "x" * 5000
PATCH = (
    "--- a/app.py\n+++ b/app.py\n@@ -1,4 +1,4 @@\n"
    "-import google.generativeai as genai\n+from google import genai\n"
    f' banner = "{SCRIPT}"\n'
    f" note = '{IMAGE}' + '``````' + '\x00\x07'\n"
    f" long = '{LONG}'\n"
)
HOSTILE_FILE = f"{IMAGE}.py"
DETAIL = f"{SCRIPT} \x00 {IMAGE} " + "y" * 20000


def hostile_project(root: Path) -> Path:
    """``root/project`` with cases/, the documentation and ``mkdocs.yml`` of this project, and a
    published round 2 (whose publication wrote ``docs/results/``)."""
    project = root / "project"
    casefile.write(project / "cases" / "cases.yaml", casefile.standard())
    case_file = load_case_file(project / "cases" / "cases.yaml")
    results = project / "results"
    patched = record("alpha__navamai", unmigrated=0)
    patched = patched.model_copy(
        update={
            "provenance": Provenance(
                **{**patched.provenance.model_dump(), "patch_sha256": "c" * 64, "pack_sha256": "ab" * 32}
            )
        }
    )
    unreviewed = patched.measurements.model_copy(update={"human_edits": None})  # no review filed yet
    patched = patched.model_copy(update={"measurements": unreviewed, "tier": tier(patched.error, unreviewed)})
    broken = unsupported("zeta__app").model_copy(
        update={"error": ErrorInfo(step="fix", reason="obelize_failed", detail=DETAIL), "tier": "error"}
    )
    run_id = make_run(results, case_file, all_cases(case_file, alpha__navamai=patched, zeta__app=broken))
    folder = run_folder(results, 2, run_id)
    facts = Artefacts(
        findings=(Finding("app.py", 1, "import", "google.generativeai", "eligible", None),),
        edits=(PlanEdit("app.py", 1, "auto", "gemini.import", None),),
        written=("app.py",),
        withheld=(Withheld(HOSTILE_FILE, 3, SCRIPT, "<b>bail</b>"),),
        exit_code=0,
        model_used=False,
        llm_tokens_in=None,
        llm_tokens_out=None,
        llm_cost_usd=None,
        run_id="20261201T100000Z-obelize",
    )
    (folder / "artefacts").mkdir(exist_ok=True)
    (folder / "artefacts" / "alpha__navamai.json").write_text(artefacts_to_json(facts), encoding="utf-8")
    (folder / "artefacts" / "alpha__navamai.diff").write_text(PATCH, encoding="utf-8")
    tails = {"baseline": "collected 3 items\n3 passed", "after": f"FAILED test_app.py::test_{SCRIPT}\n" + "z" * 900}
    (folder / "artefacts" / "alpha__navamai.tails.json").write_text(json.dumps(tails), encoding="utf-8")
    # the project's documentation, whose results pages the publication then writes
    shutil.copytree(PROJECT / "docs", project / "docs", ignore=shutil.ignore_patterns("results"))
    shutil.copy(PROJECT / "mkdocs.yml", project / "mkdocs.yml")
    (project / "docs" / "results").mkdir()
    outcome = publish_round(results, case_file, 2, run_id)
    assert outcome.published, outcome.lines
    return project
