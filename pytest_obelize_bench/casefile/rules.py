"""The protocol's rules for a case file, each a named check that ``check-cases`` prints.

Schema problems come from the pydantic models; these are the rules a well-typed file can
still break. Each check yields ``(rule, "<field>: <what was expected>")``.
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from pytest_obelize_bench._util.names import RULE, is_safe_component
from pytest_obelize_bench._util.validation import quoted
from pytest_obelize_bench.casefile.schema import (
    CONTROL_SHAPES,
    EXACT_VERSION,
    FULL_SHA,
    ISO_DATE,
    MAX_CASES_PER_OWNER,
    PACK_DISTRIBUTIONS,
    SAFE_NAME,
    SPLITS,
    UV_KEY,
    CallSite,
    CaseRow,
    ControlRow,
    FixtureRow,
    ForbiddenPosition,
    GroundTruth,
    ManifestRow,
    Review,
    key_symbols,
    slug,
)

if TYPE_CHECKING:
    from pytest_obelize_bench.casefile.schema import Case, _FileHead

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
    "control_set": "from round 2 on, the controls hold every shape, the documentation-only one among them",
    "reviewed": "every row names a reviewer and an ISO review date",
    "review_keyed_to_patch": "review answers live outside the case row, keyed to the patch they judged",
    "retired": "a retired case is kept with a reason",
    "safe_names": "ids and full_name halves are safe folder names ([A-Za-z0-9._-], no leading dot, no ..); "
    "an id starts with a letter or digit and does not end in .logs",
    "commands": "every install command and test_cmd is a non-empty command that splits into words",
    "key_paths": "every ground-truth path is relative to the checkout and stays inside it",
    "repo_url": "repo is an https:// or file:// URL",
}

Found = Iterator[tuple[str, str]]


def _pin(field: str, value: str) -> Found:
    if not EXACT_VERSION.fullmatch(value):
        yield "exact_pins", f"{field}: expected an exact X.Y.Z version, got {quoted(value)}"


def _sha(value: str) -> Found:
    if not FULL_SHA.fullmatch(value):
        yield "full_sha", f"sha: expected a full 40-hex lowercase commit SHA, got {quoted(value)}"


def _key(value: str) -> Found:
    if not UV_KEY.fullmatch(value):
        yield (
            "interpreter_key",
            f"python: expected a full uv interpreter key like cpython-3.12.9-macos-aarch64-none, got {quoted(value)}",
        )


def _safe_name(field: str, value: str) -> Found:
    if not SAFE_NAME.fullmatch(value) or ".." in value:
        yield (
            "safe_names",
            f"{field}: expected a safe folder name ([A-Za-z0-9._-], no leading dot, no ..), got {quoted(value)}",
        )


def _full_name(value: str) -> Found:
    owner, slash, name = value.partition("/")
    if not slash or "/" in name:
        yield "safe_names", f"full_name: expected owner/name, got {quoted(value)}"
        return
    yield from _safe_name("full_name", owner)
    yield from _safe_name("full_name", name)


def _repo(value: str) -> Found:
    # Anything else could be read by git as an option (--upload-pack=...) or a local path.
    if not value.startswith(("https://", "file://")) or any(ch.isspace() for ch in value):
        yield "repo_url", f"repo: expected an https:// or file:// URL, got {quoted(value)}"


def _command(field: str, value: str) -> Found:
    try:
        words = shlex.split(value)
    except ValueError as exc:
        yield "commands", f"{field}: cannot be split into words ({exc}): {quoted(value)}"
        return
    if not words:
        yield "commands", f"{field}: expected a command, got an empty one"


def _commands(install: Sequence[str], test_cmd: str | None) -> Found:
    for index, command in enumerate(install):
        yield from _command(f"install.{index}", command)
    if test_cmd is not None:
        yield from _command("test_cmd", test_cmd)


def _key_path(field: str, path: str) -> Found:
    parts = path.replace("\\", "/").split("/")
    if path.startswith(("/", "\\")) or (len(path) > 1 and path[1] == ":") or ".." in parts or not path.strip():
        yield "key_paths", f"{field}: expected a path relative to the checkout, without .., got {quoted(path)}"


def _pack(provider: str, change: str) -> Found:
    pack = f"{provider}/{change}"
    if pack not in PACK_DISTRIBUTIONS:
        known = ", ".join(sorted(PACK_DISTRIBUTIONS))
        yield "known_pack", f"provider/change: expected one of {known}, got {quoted(pack)}"


def _reviewed(reviewer: str | None, date: str | None) -> Found:
    if not (reviewer or "").strip():
        yield "reviewed", "reviewer: expected who prepared the ground truth"
    if not ISO_DATE.fullmatch(date or ""):
        yield "reviewed", f"reviewed_at: expected a YYYY-MM-DD date, got {quoted(date)}"


def _unkeyed_review(review: Review | None, where: str) -> Found:
    """A review answer on the row would apply to whatever patch any later version writes."""
    if review is None:
        return
    for field in ("human_edits", "patch_correct"):
        if getattr(review, field) is not None:
            yield (
                "review_keyed_to_patch",
                f"review.{field}: an answer on the case row would apply to any patch; it goes in {where}, "
                "keyed to the sha256 of the patch it judged (obelize-bench review CASE --run RUN prints the entry)",
            )


def _ground_truth(truth: GroundTruth, test_cmd: str | None) -> Found:
    located: tuple[tuple[str, Sequence[CallSite | ManifestRow | ForbiddenPosition]], ...] = (
        ("call_sites", truth.call_sites),
        ("manifests", truth.manifests),
        ("must_not_report", truth.must_not_report),
    )
    for group, rows in located:
        for index, row in enumerate(rows):
            yield from _key_path(f"ground_truth.{group}.{index}.path", row.path)
    for index, read in enumerate(truth.files_read):
        yield from _key_path(f"ground_truth.files_read.{index}", read)
    for index, row in enumerate(truth.call_sites):
        if row.label == "manual" and not (row.why or "").strip():
            yield "manual_why", f"ground_truth.call_sites.{index}.why: a manual row ({row.path}:{row.line}) needs a why"
    for index, manifest in enumerate(truth.manifests):
        if manifest.label == "manual" and not (manifest.why or "").strip():
            yield (
                "manual_why",
                f"ground_truth.manifests.{index}.why: a manual row ({manifest.path}:{manifest.line}) needs a why",
            )
    listed = set(truth.files_read)
    for path in sorted({row.path for row in truth.call_sites} - listed):
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
        yield "split", f"split: expected dev or holdout, got {quoted(row.split)}"
    yield from _pack(row.provider, row.change)
    expected = key_symbols(row.ground_truth)
    if list(row.pattern_key) != expected:
        yield "pattern_key", f"pattern_key: expected {expected}, got {list(row.pattern_key)}"
    yield from _safe_name("id", row.id)
    yield from _full_name(row.full_name)
    if row.id != slug(row.full_name):
        yield "unique_ids", f"id: expected {quoted(slug(row.full_name))} (full_name with / as __), got {quoted(row.id)}"
    yield from _repo(row.repo)
    yield from _commands(row.install, row.test_cmd)
    yield from _ground_truth(row.ground_truth, row.test_cmd)
    yield from _reviewed(row.reviewer, row.reviewed_at)
    yield from _unkeyed_review(row.review, "cases/reviews/round-N.yaml")
    if row.retired is not None and not row.retired.reason.strip():
        yield "retired", "retired.reason: expected why the case was retired"


def control_row_problems(row: ControlRow) -> Found:
    if row.control not in CONTROL_SHAPES:
        yield "control_shape", f"control: expected one of {', '.join(CONTROL_SHAPES)}, got {quoted(row.control)}"
    yield from _full_name(row.full_name)
    yield from _repo(row.repo)
    yield from _sha(row.sha)
    if row.python is not None:
        yield from _key(row.python)
    yield from _pack(row.provider, row.change)
    yield from _reviewed(row.reviewer, row.reviewed_at)
    if row.retired is not None and not row.retired.reason.strip():
        yield "retired", "retired.reason: expected why the control was retired"


def fixture_row_problems(row: FixtureRow, directory_name: str) -> Found:
    if row.id != directory_name:
        yield "unique_ids", f"id: expected the directory name {quoted(directory_name)}, got {quoted(row.id)}"
    yield from _safe_name("id", row.id)
    yield from _pack(row.provider, row.change)
    yield from _commands(row.install, row.test_cmd)
    yield from _ground_truth(row.ground_truth, row.test_cmd)
    yield from _unkeyed_review(row.review, "reviews.yaml beside the fixture's case.yaml")


#: The first round whose controls must hold every shape; round 1 was published with three.
CONTROL_SET_FROM_ROUND = 2


def control_set_problems(round_number: int, cases: Sequence[Case]) -> Found:
    """The protocol's four controls: one of each shape, the documentation-only one among them.

    ``check-cases`` asks it of a whole case file; loading a file for a run does not, so a test or
    partial case file still runs.  Round 1, published with three controls, is not held to it.
    """
    if round_number < CONTROL_SET_FROM_ROUND:
        return
    present = {case.control_shape for case in cases if case.control and case.retired is None}
    for shape in CONTROL_SHAPES:
        if shape not in present:
            what = "one that names the SDK only in documentation" if shape == "docs-mention" else "one"
            yield "control_set", f"controls: expected {what} (control: {shape}), found none that is not retired"


def file_problems(head: _FileHead, cases: Sequence[Case]) -> Found:
    yield from _pin("from_version", head.from_version)
    yield from _pin("to_version", head.to_version)
    yield from _reviewed(head.reviewer, head.reviewed_at)
    counts = Counter(case.id for case in cases)
    for case_id in sorted(counts):
        if not is_safe_component(case_id):
            yield "safe_names", f"case {case_id}: id: expected a name the round can make a folder of ({RULE})"
    for case_id, count in sorted(counts.items()):
        if count > 1:
            yield "unique_ids", f"case {case_id}: id: expected unique ids, found {count} rows"
    owners = Counter(case.owner for case in cases if not case.control and case.owner)
    for owner, count in sorted(owners.items()):
        if count > MAX_CASES_PER_OWNER:
            yield "owner_limit", f"owner {owner}: owner: expected at most {MAX_CASES_PER_OWNER} cases, found {count}"
    known = set(counts)
    if head.kept_sides is not None:
        for index, case_id in enumerate(head.kept_sides.cases):
            if case_id not in known:
                yield "split", f"kept_sides.cases.{index}: expected a case id of this file, got {quoted(case_id)}"
    for index, move in enumerate(head.split_moves):
        if move.case not in known:
            yield "split", f"split_moves.{index}.case: expected a case id of this file, got {quoted(move.case)}"
        elif move.to_split not in SPLITS or move.from_split not in SPLITS:
            yield (
                "split",
                f"split_moves.{index}: expected dev/holdout sides, "
                f"got {quoted(move.from_split)} -> {quoted(move.to_split)}",
            )
