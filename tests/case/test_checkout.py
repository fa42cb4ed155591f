"""Step 1 against real local git repositories (file:// URLs, no network)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench.case.checkout import cache_repository, fetch_checkout, kept_pin
from pytest_obelize_bench.isolation.elide import Elider
from pytest_obelize_bench.isolation.executor import (
    Completed,
    Executor,
    ProcessExecutor,
    step_environment,
)
from pytest_obelize_bench.isolation.steps import StepRunner
from pytest_obelize_bench.isolation.workspace import prepare_workspace
from tests.helpers.gitrepo import GitRepo, make_repo


@pytest.fixture
def origin(tmp_path: Path) -> tuple[GitRepo, str, str]:
    repo = make_repo(tmp_path / "origin" / "owner" / "repo", {"app.py": "VERSION = 1\n"})
    first = repo.head
    second = repo.commit({"app.py": "VERSION = 2\n", "extra.py": "x = 1\n"})
    return repo, first, second


def runner(tmp_path: Path, case: str, executor: Executor | None = None) -> tuple[StepRunner, Path]:
    space = prepare_workspace(tmp_path / "work", "round-1", case)
    elider = Elider([("<case>", space.checkout), ("<logs>", space.logs), ("<work>", space.root)])
    env = step_environment(os.environ, home=space.home, extra={"GIT_TERMINAL_PROMPT": "0"})
    made = StepRunner(executor or ProcessExecutor(), logs=space.logs, elider=elider, env=env, cwd=space.checkout)
    return made, space.checkout


def test_fetch_an_older_commit_by_sha_shallow(tmp_path: Path, origin: tuple[GitRepo, str, str]) -> None:
    repo, first, _ = origin
    steps, dest = runner(tmp_path, "owner__repo")
    fetch_checkout(steps, url=repo.url, sha=first, dest=dest, cache=None, owner="owner", name="repo")
    assert (dest / "app.py").read_text() == "VERSION = 1\n"
    assert not (dest / "extra.py").exists()
    assert (dest / ".git" / "shallow").read_text().strip() == first
    # init, fetch, checkout: HEAD is read from .git/HEAD, which a detached checkout makes the commit itself
    assert [(s.number, s.name, s.exit_code) for s in steps.steps] == [(1, "fetch", 0)] * 3
    assert [s.argv[1:3] for s in steps.steps] == [("init", "-q"), ("-C", "<case>"), ("-C", "<case>")]
    assert steps.steps[1].argv[3:] == ("fetch", "-q", "--depth", "1", "--end-of-options", repo.url, first)
    assert [p.name for p in sorted(steps.logs.glob("*.log"))] == ["01-fetch.log", "02-fetch.log", "03-fetch.log"]


def test_a_commit_the_repository_does_not_have_is_fetch_failed(
    tmp_path: Path, origin: tuple[GitRepo, str, str]
) -> None:
    repo, _, _ = origin
    steps, dest = runner(tmp_path, "owner__repo")
    with pytest.raises(CaseError) as failed:
        fetch_checkout(steps, url=repo.url, sha="1" * 40, dest=dest, cache=None, owner="owner", name="repo")
    assert failed.value.step == "fetch" and failed.value.reason == "fetch_failed"
    assert failed.value.detail.startswith("fetch exited 128: fatal: ")
    assert failed.value.detail.endswith("; see <logs>/02-fetch.log")
    assert steps.steps[-1].exit_code == 128


def test_a_missing_repository_is_fetch_failed_without_a_prompt(tmp_path: Path) -> None:
    steps, dest = runner(tmp_path, "owner__repo")
    with pytest.raises(CaseError) as failed:
        fetch_checkout(
            steps,
            url=(tmp_path / "nowhere").as_uri(),
            sha="2" * 40,
            dest=dest,
            cache=None,
            owner="owner",
            name="repo",
            timeout=30,
        )
    assert failed.value.reason == "fetch_failed"


@pytest.mark.parametrize("sha", ["abc123", "G" * 40, "A" * 40, ""])
def test_a_sha_that_is_not_full_is_refused_before_any_step(tmp_path: Path, sha: str) -> None:
    steps, dest = runner(tmp_path, "owner__repo")
    with pytest.raises(CaseError, match="full 40-character commit SHA"):
        fetch_checkout(steps, url="file:///x", sha=sha, dest=dest, cache=None, owner="o", name="r")
    assert steps.steps == []


def test_cache_miss_then_hit_without_the_origin(tmp_path: Path, origin: tuple[GitRepo, str, str]) -> None:
    repo, first, second = origin
    cache = tmp_path / "git-cache"
    url = repo.url

    steps, dest = runner(tmp_path, "owner__repo")
    fetch_checkout(steps, url=url, sha=second, dest=dest, cache=cache, owner="owner", name="repo")
    bare = cache_repository(cache, "owner", "repo")
    assert bare == cache / "owner" / "repo.git" and (bare / "HEAD").is_file()
    probe = [s for s in steps.steps if "cat-file" in s.argv]
    assert len(probe) == 1 and probe[0].exit_code != 0  # a miss
    assert any(url in s.argv for s in steps.steps)  # the origin was fetched once
    assert (dest / "extra.py").read_text() == "x = 1\n"

    repo.path.rename(tmp_path / "origin-gone")  # a hit must not need the origin
    steps, dest = runner(tmp_path, "owner__repo_again")
    fetch_checkout(steps, url=url, sha=second, dest=dest, cache=cache, owner="owner", name="repo")
    assert not [s for s in steps.steps if "cat-file" in s.argv]  # the pin's ref is there: no probe
    # init, then the checkout from the objects the first fetch of the pin left in the cache: no fetch
    assert [s.argv[1:] for s in steps.steps] == [("init", "-q", "<case>"), ("-C", "<case>", "checkout", "-q", second)]
    assert not any(url in s.argv for s in steps.steps)
    assert (dest / "app.py").read_text() == "VERSION = 2\n"
    assert (dest / ".git" / "shallow").is_file()

    # The cache holds the pinned commit's history, so its parent is a hit too.
    steps, dest = runner(tmp_path, "owner__repo_third")
    fetch_checkout(steps, url=url, sha=first, dest=dest, cache=cache, owner="owner", name="repo")
    assert (dest / "app.py").read_text() == "VERSION = 1\n"
    assert [s.exit_code for s in steps.steps if "cat-file" in s.argv] == [0]  # no ref of its own: probed

    # A commit the cache lacks, with the origin gone: a miss, then a clean fetch_failed.
    steps, dest = runner(tmp_path, "owner__repo_fourth")
    with pytest.raises(CaseError) as failed:
        fetch_checkout(steps, url=url, sha="3" * 40, dest=dest, cache=cache, owner="owner", name="repo")
    assert failed.value.reason == "fetch_failed"
    assert any(url in s.argv for s in steps.steps)


def test_the_cache_keeps_several_commits_of_one_repository(tmp_path: Path, origin: tuple[GitRepo, str, str]) -> None:
    repo, first, second = origin
    cache = tmp_path / "git-cache"
    for case, sha in (("a", first), ("b", second)):
        steps, dest = runner(tmp_path, case)
        fetch_checkout(steps, url=repo.url, sha=sha, dest=dest, cache=cache, owner="owner", name="repo")
    repo.path.rename(tmp_path / "origin-gone")
    for case, sha, text in (("c", first, "VERSION = 1\n"), ("d", second, "VERSION = 2\n")):
        steps, dest = runner(tmp_path, case)
        fetch_checkout(steps, url=repo.url, sha=sha, dest=dest, cache=cache, owner="owner", name="repo")
        assert (dest / "app.py").read_text() == text


def test_the_kept_objects_are_a_copy_no_case_can_reach(tmp_path: Path, origin: tuple[GitRepo, str, str]) -> None:
    repo, _, second = origin
    cache = tmp_path / "git-cache"
    steps, dest = runner(tmp_path, "first")
    fetch_checkout(steps, url=repo.url, sha=second, dest=dest, cache=cache, owner="owner", name="repo")
    kept = kept_pin(cache_repository(cache, "owner", "repo"), second)
    assert kept == cache / "owner" / "repo.pins" / second
    assert (kept / "shallow").read_text().strip() == second and not list(kept.parent.glob(".*partial"))
    kept_files = {p.relative_to(kept): p.read_bytes() for p in kept.rglob("*") if p.is_file()}
    for case in ("second", "third"):
        # a hostile case rewrites every object of its own checkout, in place
        for path in (dest / ".git" / "objects").rglob("*"):
            if path.is_file():
                path.chmod(0o644)
                path.write_bytes(b"garbage")
        assert {p.relative_to(kept): p.read_bytes() for p in kept.rglob("*") if p.is_file()} == kept_files
        steps, dest = runner(tmp_path, case)  # checked out from the kept copy, which is whole
        fetch_checkout(steps, url=repo.url, sha=second, dest=dest, cache=cache, owner="owner", name="repo")
        assert (dest / "app.py").read_text() == "VERSION = 2\n" and len(steps.steps) == 2


def test_a_kept_copy_that_does_not_check_out_is_dropped_and_the_pin_fetched(
    tmp_path: Path, origin: tuple[GitRepo, str, str]
) -> None:
    repo, _, second = origin
    cache = tmp_path / "git-cache"
    steps, dest = runner(tmp_path, "first")
    fetch_checkout(steps, url=repo.url, sha=second, dest=dest, cache=cache, owner="owner", name="repo")
    kept = kept_pin(cache_repository(cache, "owner", "repo"), second)
    for path in (kept / "objects").rglob("*"):  # the copy broken: its objects gone
        if path.is_file():
            path.unlink()
    steps, dest = runner(tmp_path, "second")
    fetch_checkout(steps, url=repo.url, sha=second, dest=dest, cache=cache, owner="owner", name="repo")
    assert (dest / "app.py").read_text() == "VERSION = 2\n" and (dest / "extra.py").is_file()
    # the failed checkout is on record, then the fetch from the cache that replaced it
    assert [s.argv[3] for s in steps.steps[1:]] == ["checkout", "fetch", "checkout"]
    assert steps.steps[1].exit_code != 0 and [s.exit_code for s in steps.steps[2:]] == [0, 0]
    assert (kept / "shallow").is_file()  # kept again, whole, from the fresh fetch
    steps, dest = runner(tmp_path, "third")
    fetch_checkout(steps, url=repo.url, sha=second, dest=dest, cache=cache, owner="owner", name="repo")
    assert len(steps.steps) == 2 and (dest / "app.py").read_text() == "VERSION = 2\n"


class LyingHead:
    """A real executor, except that the checkout leaves HEAD at another commit."""

    def __init__(self) -> None:
        self.inner = ProcessExecutor()

    def run(
        self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float, log: Path, step: str = ""
    ) -> Completed:
        done = self.inner.run(argv, cwd=cwd, env=env, timeout=timeout, log=log, step=step)
        if "checkout" in argv:
            (Path(argv[argv.index("-C") + 1]) / ".git" / "HEAD").write_text("f" * 40 + "\n", encoding="ascii")
        return done


def test_a_head_other_than_the_pin_is_fetch_failed(tmp_path: Path, origin: tuple[GitRepo, str, str]) -> None:
    repo, first, _ = origin
    steps, dest = runner(tmp_path, "owner__repo", LyingHead())
    with pytest.raises(CaseError) as failed:
        fetch_checkout(steps, url=repo.url, sha=first, dest=dest, cache=None, owner="owner", name="repo")
    assert failed.value.detail == f"HEAD is {'f' * 40}, the case pins {first}"


def test_unsafe_owner_or_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        cache_repository(tmp_path, "..", "repo")
    with pytest.raises(ValueError):
        cache_repository(tmp_path, "owner", "a/b")


@pytest.mark.parametrize("with_cache", [False, True])
def test_a_url_that_looks_like_an_option_never_reaches_git_as_one(tmp_path: Path, with_cache: bool) -> None:
    # Even past the case-file rule, fetch hands git the URL after --end-of-options.
    witness = tmp_path / "pwned"
    steps, dest = runner(tmp_path, "owner__repo")
    with pytest.raises(CaseError) as failed:
        fetch_checkout(
            steps,
            url=f"--upload-pack=touch {witness}",
            sha="3" * 40,
            dest=dest,
            cache=tmp_path / "cache" if with_cache else None,
            owner="owner",
            name="repo",
            timeout=30,
        )
    assert failed.value.reason == "fetch_failed"
    assert not witness.exists()
    fetches = [step.argv for step in steps.steps if "fetch" in step.argv]
    assert fetches and all(argv[argv.index("--end-of-options") + 1].startswith("--upload-pack") for argv in fetches)
