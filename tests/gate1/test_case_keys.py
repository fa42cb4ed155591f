"""A case file's keys as Gate 1 answer keys: the same rows, sorted into what precision and recall count."""

from __future__ import annotations

import pytest

from pytest_obelize_bench.casefile.cases import load_case_file
from pytest_obelize_bench.gate1.case_keys import frame_of_cases
from pytest_obelize_bench.measure.frame import FrameError
from tests.helpers.project import PROJECT

PACK = "gemini/google-generativeai-to-google-genai"


def test_every_reviewed_case_is_a_frame_row_and_its_key_keeps_every_row_in_its_place() -> None:
    case_file = load_case_file(PROJECT / "cases" / "cases.yaml")
    frame, keys = frame_of_cases(case_file, PACK)
    cases = [case for case in case_file.cases if not case.control]
    assert [repo.full_name for repo in frame.repositories] == [case.full_name for case in cases]
    assert all(repo.band == case.split for repo, case in zip(frame.repositories, cases, strict=True))
    for case in cases:
        key = keys[str(case.full_name)]
        truth = case.ground_truth
        assert key.sha == case.sha and key.labeller == case.reviewer and key.labelled_at == case.reviewed_at
        actionable = [(r.path, r.line, r.kind, r.symbol) for r in truth.call_sites if r.kind != "dynamic"]
        assert [(r.path, r.line, r.kind, r.symbol) for r in key.call_sites] == actionable
        other = sorted((r.path, r.line, r.kind, r.symbol) for r in key.expected_other)
        expected = [(m.path, m.line, "manifest", m.symbol) for m in truth.manifests]
        expected += [(r.path, r.line, "dynamic", r.symbol) for r in truth.call_sites if r.kind == "dynamic"]
        assert other == sorted(expected)
        assert [(f.path, f.line) for f in key.must_not_report] == [(f.path, f.line) for f in truth.must_not_report]


def test_another_pack_s_cases_are_not_in_the_frame() -> None:
    frame, keys = frame_of_cases(load_case_file(PROJECT / "cases" / "cases-round-3.yaml"), PACK)
    assert len(frame.repositories) == len(keys) == 65
    with pytest.raises(FrameError, match="cases: no reviewed case of openai/openai-0-to-1 to scan"):
        frame_of_cases(load_case_file(PROJECT / "cases" / "cases.yaml"), "openai/openai-0-to-1")
