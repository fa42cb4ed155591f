"""Each kind of file has one byte cap: whatever one reader accepts, every other reader of it accepts."""

from __future__ import annotations

from pytest_obelize_bench._util import caps
from pytest_obelize_bench.case import pipeline
from pytest_obelize_bench.comparison import rows as comparison_record
from pytest_obelize_bench.dryrun import outcomes as dryrun
from pytest_obelize_bench.error_analysis import collected, review
from pytest_obelize_bench.measure import scanrecord
from pytest_obelize_bench.records import evidence, publication, published, runs
from pytest_obelize_bench.tool import run_documents, runfolder


def test_the_graded_facts_writer_bounds_them_at_the_cap_their_readers_use() -> None:
    readers = {vars(evidence)["GRADED_FACTS_BYTES"], vars(publication)["ARTEFACT_CAP_BYTES"]}
    assert {pipeline.MAX_GRADED_FACTS_BYTES} == readers == {caps.GRADED_FACTS_BYTES}
    # a run's digests read every record and graded-facts file whole
    assert max(caps.GRADED_FACTS_BYTES, caps.RECORD_BYTES) <= runs.DIGEST_CAP_BYTES


def test_each_reader_uses_the_cap_of_its_kind() -> None:
    assert vars(evidence)["RECORD_BYTES"] == vars(published)["RECORD_CAP_BYTES"] == caps.RECORD_BYTES
    assert vars(evidence)["DECISION_BYTES"] == caps.DECISION_BYTES
    assert collected.MAX_COLLECTED_BYTES == caps.COLLECTED_ERRORS_BYTES
    assert review.MAX_REVIEW_BYTES == caps.REVIEW_BYTES
    assert run_documents.MAX_DOCUMENT_BYTES == caps.TOOL_DOCUMENT_BYTES
    assert runfolder.MAX_POINTER_BYTES == caps.POINTER_BYTES
    documents = (
        scanrecord.MAX_SCAN_DOCUMENT_BYTES,
        dryrun.MAX_DRYRUN_DOCUMENT_BYTES,
        comparison_record.MAX_RECORD_BYTES,
    )
    assert set(documents) == {caps.MEASURE_DOCUMENT_BYTES}


def test_no_module_defines_a_second_cap_of_a_kind_caps_names() -> None:
    """A number literal assigned to a ``*_BYTES`` name outside caps.py is a second cap."""
    import re
    from pathlib import Path

    import pytest_obelize_bench

    package = Path(pytest_obelize_bench.__file__).parent
    literal = re.compile(r"^(MAX_\w*BYTES|\w*CAP_BYTES)\s*=\s*[0-9]", re.MULTILINE)
    # not files of a kind read elsewhere: a step's captured output, a figure, a worker's token, an agent's stamp
    allowed = {"isolation/executor.py", "report/chart_files.py", "session/remote.py", "comparison/trees.py"}
    found = [
        f"{path.relative_to(package)}: {match.group(0)}"
        for path in sorted(package.rglob("*.py"))
        if path.relative_to(package).as_posix() not in allowed | {"_util/caps.py"}
        for match in literal.finditer(path.read_text(encoding="utf-8"))
    ]
    assert found == []
