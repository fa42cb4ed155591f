"""A project whose published round 2 holds hostile evidence, for the results pages' tests.

``alpha__navamai`` wrote a patch that quotes script tags, an image with an ``onerror``, a run of
backticks longer than a fence, control bytes and a 5,000-character line, and its graded facts
withhold a row of a file whose name is markup; ``zeta__app`` errored with a detail that carries
script, a NUL byte and a very long line. A pack's history of releases names a repository whose name
is markup and which one release could not run, with a detail that carries script. Every hostile
string would set the page's title to ``PWNED`` or mark its body if a browser ran it.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

from pytest_obelize_bench.casefile.cases import load_case_file
from pytest_obelize_bench.dryrun.outcomes import DryRunDocument, DryRunRecord
from pytest_obelize_bench.dryrun.release_files import collect_frame_history
from pytest_obelize_bench.grading.graded_facts import Artefacts, Finding, PlanEdit, Withheld, artefacts_to_json
from pytest_obelize_bench.grading.record import ErrorInfo, Provenance
from pytest_obelize_bench.grading.tiers import tier
from pytest_obelize_bench.measure.measure_publication import write_measurement
from pytest_obelize_bench.records.runs import run_folder
from pytest_obelize_bench.report.round.publish_round import publish_round
from pytest_obelize_bench.report.summarize import summarize
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
    _frame_history(project)
    return project


#: The pack of the hostile history of releases.
HISTORY_PACK = "openai/openai-0-to-1"


def _frame_history(project: Path) -> None:
    """Two releases' dry runs of a frame, a repository named with markup erroring under the second;
    the history written and the pages rewritten from it."""
    shutil.copy(PROJECT / "cases" / "promotion.yaml", project / "cases" / "promotion.yaml")
    names = ("o/plain", f"o/{SCRIPT}")
    for version, errored in (("0.2.0", False), ("0.3.0", True)):
        records = [
            DryRunRecord(full_name=name, sha="a" * 40, band="search", outcome="complete")
            if not (errored and name != names[0])
            else DryRunRecord(
                full_name=name, sha="a" * 40, band="search", outcome=None, error=f"obelize_failed: fix: {IMAGE}"
            )
            for name in names
        ]
        document = DryRunDocument(pack=HISTORY_PACK, frame="frame.yaml", term="openai", obelize_version=version,
                                  pack_sha256=None, run_at="2026-12-07T10:00:00Z", records=records)  # fmt: skip
        folder = project / "results" / "dryrun" / "openai__openai-0-to-1" / "releases" / version
        write_measurement(project / "results", folder / "dryrun.json", document.to_json(), measurement="dryrun",
                          pack=HISTORY_PACK, session=f"hostile-{version}", run_at=document.run_at,
                          repositories=len(records), infrastructure=0, block=None)  # fmt: skip
    history = collect_frame_history(project / "results", HISTORY_PACK, project / "cases")
    (project / "results" / "dryrun" / "openai__openai-0-to-1" / "history.json").write_text(
        history.to_json(), encoding="utf-8"
    )
    assert summarize(project / "results", project / "cases" / "cases.yaml", check=False, out=io.StringIO()) == 0
