"""Before a round: which cases to collect, and the context every worker shares.

Everything here runs once per session. The controller refuses a round it could not
publish honestly (an uncommitted tree, a case file for another round) before any case runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pytest_obelize_bench.case.context import RoundContext
from pytest_obelize_bench.case.environment import default_uv_cache, exclude_newer_now, validate_exclude_newer
from pytest_obelize_bench.case.templates import TEMPLATES_DIR
from pytest_obelize_bench.casefile.cases import (
    Case,
    CaseFile,
    CaseFileError,
    load_case_file,
    load_fixtures,
)
from pytest_obelize_bench.casefile.reach import ReachListError, read_reach_list, unreachable_rows
from pytest_obelize_bench.casefile.reviews import ReviewBook, ReviewFileError, load_reviews, reviews_path
from pytest_obelize_bench.isolation.gitquery import harness_provenance
from pytest_obelize_bench.isolation.limits import LimitError, parse_limits
from pytest_obelize_bench.isolation.sandbox import SandboxUnavailable, Settings, choose
from pytest_obelize_bench.isolation.workspace import default_work_root
from pytest_obelize_bench.options.read import options_of
from pytest_obelize_bench.session.remote import write_session_marker
from pytest_obelize_bench.session.stash_keys import ROUND_FILES_KEY
from pytest_obelize_bench.tool.info import ToolError, ToolInfo
from pytest_obelize_bench.tool.packs import PackInfo, pack_provenance
from pytest_obelize_bench.tool.venv import resolve_tool


def option_path(config: pytest.Config, value: str, rootdir: Path) -> Path:
    """An option's path: relative to the cwd when it exists there, else to the rootdir."""
    path = Path(value).expanduser()
    if path.is_absolute():
        return path
    invocation = Path(config.invocation_params.dir)
    return (invocation / path) if (invocation / path).exists() else (rootdir / path)


@dataclass(frozen=True)
class RoundFiles:
    """The case file and the round's reviews, read once when the session starts and passed on: the
    controller, the run's life and each case's grading use these, never a second read of the files."""

    case_file: CaseFile | None
    reviews: ReviewBook | None
    #: the rows ``--bench-unreachable`` names as out of this machine's reach, by id, with the reason
    unreachable: Mapping[str, str] = field(default_factory=dict)


def load_items(config: pytest.Config, mode: str, rootdir: Path) -> dict[Path, list[Case]]:
    """The files to collect and the cases each yields; raises CaseFileError on a bad file. The files
    read are kept in the config's stash (``ROUND_FILES_KEY``)."""
    options = options_of(config)
    if mode == "fixtures":
        root = option_path(config, options.fixtures, rootdir)
        config.stash[ROUND_FILES_KEY] = RoundFiles(None, None)
        return {(root / case.id / "case.yaml").resolve(): [case] for case in load_fixtures(root)}
    path = option_path(config, options.cases, rootdir)
    case_file = load_case_file(path)
    wanted = options.round
    if case_file.round != wanted:
        raise CaseFileError(
            [f"{path}: top level: round: the file is round {case_file.round}, but --bench-round={wanted} was asked for"]
        )
    try:  # checked before anything runs; each case's grading reads its patch's answer from it
        reviews = load_reviews(reviews_path(path, wanted))
    except ReviewFileError as exc:
        raise CaseFileError([str(exc)]) from None
    unreachable: dict[str, str] = {}
    if options.unreachable:
        listed = option_path(config, options.unreachable, rootdir)
        try:
            unreachable = unreachable_rows(case_file.cases, read_reach_list(listed))
        except ReachListError as exc:
            raise CaseFileError([f"--bench-unreachable: {exc}"]) from None
    config.stash[ROUND_FILES_KEY] = RoundFiles(case_file, reviews, unreachable)
    side = options.split
    cases = [case for case in case_file.cases if (side is None or case.split == side) and case.id not in unreachable]
    return {path.resolve(): cases}


def _case_file_digest(config: pytest.Config) -> str | None:
    """The digest of the bytes ``load_items`` read the round's case file from."""
    files = config.stash.get(ROUND_FILES_KEY, None)
    return None if files is None or files.case_file is None else files.case_file.sha256


def build_context(
    config: pytest.Config, mode: str, rootdir: Path, cases_by_path: dict[Path, list[Case]], *, work_below: str = ""
) -> RoundContext:
    """Every RoundContext, computed on the controller only: a round's, the fixtures pass's, and the
    one the comparison's suites read (mode ``comparison``: its cases work ``work_below`` the work root,
    its records are the comparison's, so neither the harness's tree nor a session marker is asked for)."""
    options = options_of(config)

    collect_only = options.collect_only
    harness = harness_provenance(rootdir)
    allow_dirty = options.allow_dirty
    if mode == "round" and not collect_only and not allow_dirty and harness.tree_dirty is not False:
        why = "is not a git checkout" if harness.tree_dirty is None else "has uncommitted changes"
        raise pytest.UsageError(
            f"{rootdir} {why}; a round's records must name the code that ran. "
            "Commit first, or pass --bench-allow-dirty (the records will say so)."
        )
    work_option = options.work
    base_root = Path(work_option) if work_option else default_work_root()  # absolute already (options)
    work_root = base_root / work_below if work_below else base_root
    cache_option = options.repo_cache
    templates = Path(options.env_templates) if options.env_templates else base_root / TEMPLATES_DIR
    if not collect_only:  # made now, so the sandbox hides it from a case's first step on
        try:
            templates.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise pytest.UsageError(f"--bench-env-templates: cannot make {templates}: {exc.strerror}") from None
    exclude = options.exclude_newer
    try:
        exclude_newer = validate_exclude_newer(exclude) if exclude else exclude_newer_now()
    except ValueError as exc:
        raise pytest.UsageError(f"--exclude-newer: {exc}") from None

    try:
        step_limits = parse_limits(options.step_timeout)
    except LimitError as exc:
        raise pytest.UsageError(str(exc)) from None
    sandbox = sandbox_settings(config, probe=not collect_only)  # before a tool venv is built
    spec = options.obelize
    if mode == "fixtures" and spec:
        raise pytest.UsageError(
            "--fixtures-only runs the obelize installed beside the harness; --obelize does not apply"
        )
    tool: ToolInfo | None = None
    tool_checkout: str | None = None
    packs: dict[str, PackInfo] = {}
    if not collect_only:
        try:
            tool = resolve_tool(spec, tool_root=base_root / "tools", exclude_newer=exclude_newer)
        except ToolError as exc:
            raise pytest.UsageError(f"--obelize: {exc}") from None
        if tool.source == "checkout" and spec:  # remote workers need it at this very path (remote.py)
            tool_checkout = str(Path(spec).expanduser().resolve())
        for pack in sorted({case.pack for cases in cases_by_path.values() for case in cases}):
            packs[pack] = pack_provenance(tool, pack)
    return RoundContext(
        mode="fixtures" if mode == "fixtures" else "round",
        round=options.round,
        project_root=str(rootdir),
        cases_path=str(option_path(config, options.cases, rootdir)),
        fixtures_dir=str(option_path(config, options.fixtures, rootdir)),
        results_dir=str(option_path(config, options.results, rootdir)),
        work_root=str(work_root),
        # The round's and the comparison's suites share the base work root's templates.
        env_templates=str(templates),
        template_bytecode=options.template_bytecode == "compile",
        repo_cache=cache_option,
        interpreter_policy=options.interpreter,
        python_search=tuple(str(Path(p).expanduser()) for p in options.python_path),
        exclude_newer=exclude_newer,
        uv_cache=str(default_uv_cache(base_root)),
        allow_dirty=allow_dirty,
        tool=tool,
        packs=packs,
        harness=harness,
        step_limits=step_limits,
        sandbox=sandbox,
        work_token=write_session_marker(work_root) if mode != "comparison" else None,
        cases_sha256=_case_file_digest(config) if mode == "round" else None,
        tool_checkout=tool_checkout,
    )


def sandbox_settings(config: pytest.Config, *, probe: bool) -> Settings:
    """``--bench-sandbox`` decided once, on the controller: bwrap is probed here and nowhere else."""
    options = options_of(config)

    mode = options.sandbox
    if not probe:  # --collect-only runs no step
        return Settings(mode=mode)
    try:
        return choose(mode)
    except SandboxUnavailable as exc:
        raise pytest.UsageError(f"--bench-sandbox={mode}: {exc}") from None


__all__ = ["RoundFiles", "build_context", "load_items", "option_path", "sandbox_settings"]
