"""The protocol's rules for a case file, each a named check that ``check-cases`` prints.

Schema problems come from the pydantic models; these are the rules a well-typed file can
still break. Each check yields ``(rule, "<field>: <what was expected>")``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from pytest_obelize_bench.cases import (
    CONTROL_SHAPES,
    EXACT_VERSION,
    FULL_SHA,
    ISO_DATE,
    MAX_CASES_PER_OWNER,
    PACK_DISTRIBUTIONS,
    SPLITS,
    UV_KEY,
    CaseRow,
    ControlRow,
    FixtureRow,
    GroundTruth,
    key_symbols,
    slug,
)

if TYPE_CHECKING:
    from pytest_obelize_bench.cases import Case, _FileHead

#: Every rule, in the order ``check-cases`` prints them.
RULES: dict[str, str] = {
    "schema": "every row matches the case schema",
    "exact_pins": "every case pins both SDK versions exactly (X.Y.Z)",
    "full_sha": "every row pins a full 40-hex commit SHA",
    "interpreter_key": "every case names a full uv interpreter key (never 3.10)",
    "split": "every case is on the dev or the holdout side",
    "known_pack": "provider/change name a pack obelize ships",
    "pattern_key": "pattern_key is the sorted set of actionable call-site symbols",
    "owner_limit": f"at most {MAX_CASES_PER_OWNER} cases per repository owner",
    "unique_ids": "ids are unique, and a case's id is its full_name with / as __",
    "manual_why": "every manual row says why",
    "files_read": "files_read covers every call-site path",
    "tests_cover_change": "tests_cover_change is true only with a test_cmd",
    "must_not_report": "every must_not_report row gives a reason",
    "control_shape": "every control has a control shape",
    "reviewed": "every row names a reviewer and an ISO review date",
    "retired": "a retired case is kept with a reason",
}

Found = Iterator[tuple[str, str]]


def _pin(field: str, value: str) -> Found:
    if not EXACT_VERSION.match(value):
        yield "exact_pins", f"{field}: expected an exact X.Y.Z version, got {value!r}"


def _sha(value: str) -> Found:
    if not FULL_SHA.match(value):
        yield "full_sha", f"sha: expected a full 40-hex lowercase commit SHA, got {value!r}"


def _key(value: str) -> Found:
    if not UV_KEY.match(value):
        yield (
            "interpreter_key",
            f"python: expected a full uv interpreter key like cpython-3.12.9-macos-aarch64-none, got {value!r}",
        )


def _pack(provider: str, change: str) -> Found:
    pack = f"{provider}/{change}"
    if pack not in PACK_DISTRIBUTIONS:
        known = ", ".join(sorted(PACK_DISTRIBUTIONS))
        yield "known_pack", f"provider/change: expected one of {known}, got {pack!r}"


def _reviewed(reviewer: str | None, date: str | None) -> Found:
    if not (reviewer or "").strip():
        yield "reviewed", "reviewer: expected who prepared the ground truth"
    if not ISO_DATE.match(date or ""):
        yield "reviewed", f"reviewed_at: expected a YYYY-MM-DD date, got {date!r}"


def _ground_truth(truth: GroundTruth, test_cmd: str | None) -> Found:
    for index, row in enumerate(truth.call_sites):
        if row.label == "manual" and not (row.why or "").strip():
            yield "manual_why", f"ground_truth.call_sites.{index}.why: a manual row ({row.path}:{row.line}) needs a why"
    for index, manifest in enumerate(truth.manifests):
        if manifest.label == "manual" and not (manifest.why or "").strip():
            yield "manual_why", f"ground_truth.manifests.{index}.why: a manual row ({manifest.path}:{manifest.line}) needs a why"
    read = set(truth.files_read)
    for path in sorted({row.path for row in truth.call_sites} - read):
        yield "files_read", f"ground_truth.files_read: expected to list {path}, which holds a call site"
    if truth.tests_cover_change and not test_cmd:
        yield "tests_cover_change", "ground_truth.tests_cover_change: true needs a test_cmd"
    for index, position in enumerate(truth.must_not_report):
        if not position.why.strip():
            yield "must_not_report", f"ground_truth.must_not_report.{index}.why: expected a reason"


def case_row_problems(row: CaseRow) -> Found:
    yield from _pin("from_version", row.from_version)
    yield from _pin("to_version", row.to_version)
    yield from _sha(row.sha)
    yield from _key(row.python)
    if row.split not in SPLITS:
        yield "split", f"split: expected dev or holdout, got {row.split!r}"
    yield from _pack(row.provider, row.change)
    expected = key_symbols(row.ground_truth)
    if list(row.pattern_key) != expected:
        yield "pattern_key", f"pattern_key: expected {expected}, got {list(row.pattern_key)}"
    if row.id != slug(row.full_name):
        yield "unique_ids", f"id: expected {slug(row.full_name)!r} (full_name with / as __), got {row.id!r}"
    yield from _ground_truth(row.ground_truth, row.test_cmd)
    yield from _reviewed(row.reviewer, row.reviewed_at)
    if row.retired is not None and not row.retired.reason.strip():
        yield "retired", "retired.reason: expected why the case was retired"


def control_row_problems(row: ControlRow) -> Found:
    if row.control not in CONTROL_SHAPES:
        yield "control_shape", f"control: expected one of {', '.join(CONTROL_SHAPES)}, got {row.control!r}"
    yield from _sha(row.sha)
    if row.python is not None:
        yield from _key(row.python)
    yield from _pack(row.provider, row.change)
    yield from _reviewed(row.reviewer, row.reviewed_at)
    if row.retired is not None and not row.retired.reason.strip():
        yield "retired", "retired.reason: expected why the control was retired"


def fixture_row_problems(row: FixtureRow, directory_name: str) -> Found:
    if row.id != directory_name:
        yield "unique_ids", f"id: expected the directory name {directory_name!r}, got {row.id!r}"
    yield from _pack(row.provider, row.change)
    yield from _ground_truth(row.ground_truth, row.test_cmd)


def file_problems(head: _FileHead, cases: Sequence[Case]) -> Found:
    yield from _pin("from_version", head.from_version)
    yield from _pin("to_version", head.to_version)
    yield from _reviewed(head.reviewer, head.reviewed_at)
    counts = Counter(case.id for case in cases)
    for case_id, count in sorted(counts.items()):
        if count > 1:
            yield "unique_ids", f"case {case_id}: id: expected unique ids, found {count} rows"
    owners = Counter(case.owner for case in cases if not case.control and case.owner)
    for owner, count in sorted(owners.items()):
        if count > MAX_CASES_PER_OWNER:
            yield "owner_limit", f"owner {owner}: owner: expected at most {MAX_CASES_PER_OWNER} cases, found {count}"
    known = set(counts)
    for index, move in enumerate(head.split_moves):
        if move.case not in known:
            yield "split", f"split_moves.{index}.case: expected a case id of this file, got {move.case!r}"
        elif move.to_split not in SPLITS or move.from_split not in SPLITS:
            yield "split", f"split_moves.{index}: expected dev/holdout sides, got {move.from_split!r} -> {move.to_split!r}"
