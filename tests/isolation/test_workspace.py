"""Where a case lives, and the isolation check above its checkout."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench.isolation.workspace import (
    ANCESTOR_CONFIGS,
    check_isolation,
    default_work_root,
    isolation_problems,
    keeps_checkout,
    prepare_workspace,
    remove_checkout,
)


def test_default_work_root_is_the_users_own_under_the_system_temp_dir() -> None:
    assert default_work_root() == Path(tempfile.gettempdir()) / f"obelize-bench-{os.getuid()}"


def test_remove_checkout_keeps_the_logs(tmp_path: Path) -> None:
    space = prepare_workspace(tmp_path, "round-2", "alpha__app")
    (space.checkout / ".venv" / "bin").mkdir(parents=True)
    (space.logs / "01-fetch.log").write_text("$ git\n", encoding="utf-8")
    assert remove_checkout(tmp_path, "round-2", "alpha__app") is True
    assert not space.checkout.exists() and (space.logs / "01-fetch.log").is_file()
    assert remove_checkout(tmp_path, "round-2", "alpha__app") is False
    with pytest.raises(ValueError):
        remove_checkout(tmp_path, "round-2", "../escape")


def test_layout(tmp_path: Path) -> None:
    space = prepare_workspace(tmp_path, "round-2", "owner__repo")
    assert space.root == tmp_path
    assert space.checkout == tmp_path / "round-2" / "owner__repo"
    assert space.logs == tmp_path / "round-2" / "owner__repo.logs"
    assert space.artefacts == space.logs / "artefacts"
    assert space.home == tmp_path / "home" / "round-2" / "owner__repo"
    assert space.logs.is_dir() and space.artefacts.is_dir() and space.home.is_dir()
    assert not space.checkout.exists()


def test_a_rerun_starts_clean(tmp_path: Path) -> None:
    first = prepare_workspace(tmp_path, "fixtures", "fx_one")
    (first.checkout / "sub").mkdir(parents=True)
    (first.checkout / "sub" / "file.py").write_text("x")
    (first.checkout / "sub").chmod(0o500)
    (first.logs / "01-fetch.log").write_text("old")
    (first.home / ".cache").mkdir()
    other = prepare_workspace(tmp_path, "fixtures", "fx_two")
    (other.logs / "keep.log").write_text("other case")

    again = prepare_workspace(tmp_path, "fixtures", "fx_one")
    assert not again.checkout.exists()
    assert list(again.logs.iterdir()) == [again.artefacts]
    assert list(again.home.iterdir()) == []
    assert (other.logs / "keep.log").read_text() == "other case"


@pytest.mark.parametrize("case_id", ["", ".", "..", "a/b", "../x", ".hidden", "x y", "c.logs", "-x"])
def test_unsafe_case_ids_are_refused(tmp_path: Path, case_id: str) -> None:
    with pytest.raises(ValueError, match="not a safe directory name"):
        prepare_workspace(tmp_path, "round-1", case_id)


def test_reserved_round_labels_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="reserved"):
        prepare_workspace(tmp_path, "home", "case")


def test_a_config_three_levels_up_is_found(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    checkout = tmp_path / "work" / "round-1" / "owner__repo"
    assert isolation_problems(checkout) == ["pytest.ini (3 level(s) up)"]
    with pytest.raises(CaseError) as failed:
        check_isolation(checkout)
    assert failed.value.step == "isolation"
    assert failed.value.reason == "work_root_not_isolated"
    assert failed.value.detail.startswith("pytest.ini (3 level(s) up): ")
    assert "--bench-work" in failed.value.detail


def test_nearest_first_and_every_name(tmp_path: Path) -> None:
    checkout = tmp_path / "a" / "b" / "case"
    checkout.mkdir(parents=True)
    for name in ANCESTOR_CONFIGS:
        (tmp_path / name).write_text("")
    (tmp_path / "a" / "b" / "setup.cfg").write_text("")
    (tmp_path / "a" / "conftest.py").mkdir()  # a directory is not a config
    assert isolation_problems(checkout) == ["setup.cfg (1 level(s) up)"] + [
        f"{name} (3 level(s) up)" for name in ANCESTOR_CONFIGS
    ]


def test_configs_inside_the_checkout_are_the_repositorys_own(tmp_path: Path) -> None:
    checkout = tmp_path / "work" / "round-1" / "owner__repo"
    checkout.mkdir(parents=True)
    for name in ANCESTOR_CONFIGS:
        (checkout / name).write_text("")
    assert isolation_problems(checkout) == []
    check_isolation(checkout)


def test_the_check_walks_resolved_parents(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "work").mkdir(parents=True)
    (project / "pyproject.toml").write_text("")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "link").symlink_to(project / "work")
    assert isolation_problems(tmp_path / "elsewhere" / "link" / "case") == ["pyproject.toml (2 level(s) up)"]


def test_bench_keep_keeps_every_checkout_those_that_failed_or_none() -> None:
    assert [keeps_checkout("all", failed) for failed in (False, True)] == [True, True]
    assert [keeps_checkout("failed", failed) for failed in (False, True)] == [False, True]
    assert [keeps_checkout("none", failed) for failed in (False, True)] == [False, False]
