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
