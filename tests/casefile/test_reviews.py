"""Review answers keyed by case and patch sha256, outside the frozen case file."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_obelize_bench.casefile.reviews import ReviewFileError, load_reviews, reviews_path

ENTRY = """\
  - case: ann__a
    patch_sha256: {sha}
    human_edits: 0
    patch_correct: true
    reviewer: me
    reviewed_at: '2026-12-03'
"""


def write(tmp_path: Path, *entries: str) -> Path:
    path = tmp_path / "reviews" / "round-2.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("reviews:\n" + "".join(entries), encoding="utf-8")
    return path


def test_answers_are_keyed_by_case_and_digest(tmp_path: Path) -> None:
    book = load_reviews(write(tmp_path, ENTRY.format(sha="a" * 64)))
    assert set(book) == {("ann__a", "a" * 64)} and book[("ann__a", "a" * 64)].patch_correct is True
    assert load_reviews(tmp_path / "absent.yaml") == {}
    assert reviews_path(Path("cases/cases.yaml"), 3) == Path("cases/reviews/round-3.yaml")


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ([ENTRY.format(sha="xyz")], "case 'ann__a' field patch_sha256"),
        ([ENTRY.format(sha="a" * 64).replace("human_edits: 0", "human_edits: -1")], "case 'ann__a' field human_edits"),
        ([ENTRY.format(sha="a" * 64)] * 2, "reviewed twice"),
    ],
)
def test_a_bad_review_is_one_line_naming_the_file_case_and_field(
    tmp_path: Path, entries: list[str], message: str
) -> None:
    path = write(tmp_path, *entries)
    with pytest.raises(ReviewFileError) as caught:
        load_reviews(path)
    assert str(path) in str(caught.value) and message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_symlinked_review_file_is_refused(tmp_path: Path) -> None:
    real = write(tmp_path, ENTRY.format(sha="a" * 64))
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    with pytest.raises(ReviewFileError):
        load_reviews(link)


def test_an_answer_on_a_case_row_is_refused_at_load_in_one_line_naming_file_case_and_field(tmp_path: Path) -> None:
    from pytest_obelize_bench.casefile.cases import CaseFileError, load_case_file
    from tests.helpers import casefile

    data = casefile.standard()
    data["cases"][1]["review"] = {
        "human_edits": 0,
        "patch_correct": None,
        "reviewer": "me",
        "reviewed_at": "2026-12-03",
    }
    path = casefile.write(tmp_path / "cases.yaml", data)
    with pytest.raises(CaseFileError) as caught:
        load_case_file(path)
    (line,) = caught.value.problems
    assert line.startswith(f"{path}: case alpha__navamai: review.human_edits: an answer on the case row")
    assert "cases/reviews/round-N.yaml" in line


def test_a_case_row_s_unanswered_review_block_stays_valid(tmp_path: Path) -> None:
    from pytest_obelize_bench.casefile.cases import load_case_file
    from tests.helpers import casefile

    data = casefile.standard()
    data["cases"][1]["review"] = {"human_edits": None, "patch_correct": None, "reviewer": None, "reviewed_at": None}
    assert len(load_case_file(casefile.write(tmp_path / "cases.yaml", data)).cases) == 4


def test_an_answer_applies_to_its_own_patch_only() -> None:
    from pytest_obelize_bench.casefile.reviews import review_for
    from pytest_obelize_bench.casefile.schema import Review

    answer = Review(human_edits=0, patch_correct=True)
    book = {("ann__a", "a" * 64): answer}
    assert review_for(book, "ann__a", "a" * 64) == answer
    assert review_for(book, "ann__a", "b" * 64) is None  # another version's patch
    assert review_for(book, "bob__b", "a" * 64) is None  # the same bytes, another case
    assert review_for(book, "ann__a", None) is None  # nothing written


def test_a_fixture_s_reviews_answer_for_that_fixture_only(tmp_path: Path) -> None:
    import shutil

    from pytest_obelize_bench.casefile.cases import CaseFileError, load_fixture

    fixture = tmp_path / "clean"
    shutil.copytree(Path(__file__).parents[2] / "cases" / "fixtures" / "clean", fixture, symlinks=True)
    assert load_fixture(fixture).id == "clean"
    answers = fixture / "reviews.yaml"
    answers.write_text(answers.read_text(encoding="utf-8").replace("case: clean", "case: other"), encoding="utf-8")
    with pytest.raises(CaseFileError) as caught:
        load_fixture(fixture)
    assert caught.value.problems == [f"{answers}: case 'other': case: expected 'clean', the fixture's id"]


def test_a_review_carries_its_one_line_reason_and_an_empty_one_is_refused(tmp_path: Path) -> None:
    entry = ENTRY.format(sha="b" * 64) + "    why: read the whole diff against the key rows\n"
    assert set(load_reviews(write(tmp_path, entry))) == {("ann__a", "b" * 64)}
    with pytest.raises(ReviewFileError, match="case 'ann__a' field why"):
        load_reviews(write(tmp_path, ENTRY.format(sha="b" * 64) + "    why: ''\n"))


def test_the_committed_round_2_reviews_each_give_a_reason() -> None:
    import yaml

    from tests.helpers.project import PROJECT

    entries = yaml.safe_load((PROJECT / "cases" / "reviews" / "round-2.yaml").read_text(encoding="utf-8"))["reviews"]
    assert entries and all(str(entry.get("why") or "").strip() for entry in entries)
    assert load_reviews(PROJECT / "cases" / "reviews" / "round-2.yaml")
