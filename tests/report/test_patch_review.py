"""``obelize-bench review CASE --run RUN``: the patch its record graded and an entry keyed to it."""

from __future__ import annotations

import hashlib
from pathlib import Path

from pytest_obelize_bench.casefile.reviews import load_reviews
from tests.helpers import casefile, runs
from tests.helpers.bench_cli import obelize_bench

PATCH = b"--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-import google.generativeai\n+from google import genai\n"


def project(tmp_path: Path, patch: bytes | None) -> Path:
    casefile.write(tmp_path / "cases" / "cases.yaml", casefile.standard())
    record = runs.record("alpha__navamai")
    digest = None if patch is None else hashlib.sha256(patch).hexdigest()
    record = record.model_copy(update={"provenance": record.provenance.model_copy(update={"patch_sha256": digest})})
    runs.write_run(tmp_path / "results" / "round-2" / "runs" / "r1", [record], None)
    logs = tmp_path / "work" / "round-2" / "alpha__navamai.logs" / "artefacts"
    logs.mkdir(parents=True)
    (logs / "patch.diff").write_bytes(PATCH)
    return tmp_path


def review(root: Path) -> tuple[int, str]:
    args = ["review", "alpha__navamai", "--run", "r1", "--work", str(root / "work")]
    return obelize_bench(*args, "--cases", root / "cases" / "cases.yaml", "--results", root / "results")


def test_review_prints_the_patch_and_an_entry_that_loads_once_filled(tmp_path: Path) -> None:
    root = project(tmp_path, PATCH)
    status, output = review(root)
    assert status == 0, output
    digest = hashlib.sha256(PATCH).hexdigest()
    assert f"patch sha256: {digest}" in output and "+from google import genai" in output
    entry = output.split("it applies to this patch only:\n", 1)[1]
    assert str(root / "cases" / "reviews" / "round-2.yaml") in output
    filled = (
        entry.replace("human_edits:  ", "human_edits: 0 ")
        .replace("patch_correct:  ", "patch_correct: true ")
        .replace("reviewer:  ", "reviewer: me ")
        .replace("reviewed_at:  ", "reviewed_at: '2026-12-03' ")
    )
    path = root / "cases" / "reviews" / "round-2.yaml"
    path.parent.mkdir(parents=True)
    path.write_text("reviews:\n" + filled, encoding="utf-8")
    book = load_reviews(path)
    assert book[("alpha__navamai", digest)].human_edits == 0


def test_a_patch_in_the_logs_with_another_digest_is_not_shown(tmp_path: Path) -> None:
    root = project(tmp_path, PATCH + b"# another run\n")
    status, output = review(root)
    assert status == 0
    assert "is another patch" in output and "+from google import genai" not in output


def test_a_record_without_a_patch_digest_has_nothing_to_review(tmp_path: Path) -> None:
    status, output = review(project(tmp_path, None))
    assert status == 0 and "names no patch" in output and "patch_sha256:" not in output


def test_a_missing_record_is_one_line(tmp_path: Path) -> None:
    root = project(tmp_path, PATCH)
    args = ["review", "alpha__navamai", "--run", "nope", "--cases", str(root / "cases" / "cases.yaml")]
    status, out = obelize_bench(*args, "--results", root / "results")
    assert status == 2 and out.count("\n") == 1
