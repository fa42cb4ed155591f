"""Gate 1 over a case file: each case's repository is a frame row and its ground truth the answer key.

A round's keys are written the way Gate 1's are, from the source alone before any scan, so the
same rows measure the scan: the call sites of the actionable kinds are what precision and recall
count, the manifest pins and ``dynamic`` rows are the other rows it is right to report, and the
must-not-report positions carry over. Built from the loaded case file, never read twice; the
controls have no key to match and are left out, as are retired cases.
"""

from __future__ import annotations

from pytest_obelize_bench.casefile.cases import Case, CaseFile
from pytest_obelize_bench.gate1.labels import ACTIONABLE_KINDS, AnswerKey, CallSite, Forbidden, OtherRow
from pytest_obelize_bench.measure.frame import Frame, FrameError, FrameRepository

__all__ = ["CASES_TERM", "frame_of_cases", "key_of_case"]

#: What a case file's frame was drawn for: the cases' own keys, not a search term.
CASES_TERM = "the cases' keys"


def key_of_case(case: Case) -> AnswerKey:
    """The case's ground truth as a Gate 1 answer key (the case row's facts, unchanged)."""
    truth = case.ground_truth
    return AnswerKey(
        repository=str(case.full_name),
        url=str(case.repo),
        sha=str(case.sha),
        band=str(case.split),
        license=str(case.license),
        labeller=str(case.reviewer),
        labelled_at=str(case.reviewed_at),
        what_it_is=truth.what_it_is or case.id,
        files_read=sorted(set(truth.files_read) | {row.path for row in truth.call_sites}) or ["(none)"],
        call_sites=[
            CallSite(path=row.path, line=row.line, kind=row.kind, symbol=row.symbol)  # type: ignore[arg-type]
            for row in truth.call_sites
            if row.kind in ACTIONABLE_KINDS
        ],
        expected_other=[
            *(OtherRow(path=row.path, line=row.line, kind="manifest", symbol=row.symbol) for row in truth.manifests),
            *(
                OtherRow(path=row.path, line=row.line, kind="dynamic", symbol=row.symbol)
                for row in truth.call_sites
                if row.kind == "dynamic"
            ),
        ],
        must_not_report=[Forbidden(path=row.path, line=row.line, why=row.why) for row in truth.must_not_report],
    )


def frame_of_cases(case_file: CaseFile, pack: str) -> tuple[Frame, dict[str, AnswerKey]]:
    """The frame of the file's cases of ``pack`` (controls, retired and unreviewed cases aside) and a key
    for each."""
    cases = [
        case
        for case in case_file.cases
        if not case.control
        and case.retired is None
        and case.pack == pack
        and case.sha is not None
        and case.reviewer is not None
        and case.reviewed_at is not None
    ]
    if not cases:
        raise FrameError([f"{case_file.path}: cases: no reviewed case of {pack} to scan"])
    repositories = [
        FrameRepository(
            full_name=str(case.full_name),
            owner=case.owner,
            url=case.repo,
            sha=case.sha,
            license=case.license,
            band=str(case.split),
        )
        for case in cases
    ]
    frame = Frame(term=CASES_TERM, pack=pack, repositories=repositories)
    return frame, {str(case.full_name): key_of_case(case) for case in cases}
