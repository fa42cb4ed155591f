"""A worker's own paths: what a worker on another machine derives from the round's context.

The context names the controller's paths (work root, tool venv, repository cache, case file).
A worker that cannot see the controller's work root (another machine, or another mount
namespace) must not use any of them: it keeps the context's *specs* (tool spec,
``exclude_newer``, step limits, sandbox settings, provenance) and derives every path on its own
machine. It knows it shares the controller's filesystem when the session marker the controller
wrote under its work root is there with the session's token.
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Callable, Mapping
from pathlib import Path

from pytest_obelize_bench._util.digests import sha256_bytes
from pytest_obelize_bench.case.context import RoundContext
from pytest_obelize_bench.case.environment import default_uv_cache
from pytest_obelize_bench.isolation.workspace import default_work_root, keeps_checkout, remove_checkout
from pytest_obelize_bench.tool.info import ToolError, ToolInfo
from pytest_obelize_bench.tool.venv import resolve_tool

#: A worker's own work root (checkouts, logs, tool venvs, uv cache), over ``--bench-work``.
WORK_ENV = "OBELIZE_BENCH_WORK"
#: A worker's own bare-repository cache; a remote worker without it fetches from the origins.
REPO_CACHE_ENV = "OBELIZE_BENCH_REPO_CACHE"
#: Where the controller leaves one marker per session under its work root.
SESSIONS_DIR = ".sessions"
#: A marker holds a hex token; anything longer is not ours.
MAX_TOKEN_BYTES = 64


def write_session_marker(work_root: Path) -> str:
    """Leave ``<work root>/.sessions/<token>`` for the workers to find; return the token."""
    token = secrets.token_hex(16)
    folder = Path(work_root) / SESSIONS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    (folder / token).write_text(token, encoding="ascii")
    return token


def shares_controller_paths(context: RoundContext) -> bool:
    """True when this process sees the controller's work root (the session marker is there)."""
    token = context.work_token
    if not token or not token.isalnum():
        return False
    marker = Path(context.work_root) / SESSIONS_DIR / token
    try:
        if marker.is_symlink() or not marker.is_file():
            return False
        with marker.open("rb") as handle:
            return handle.read(MAX_TOKEN_BYTES + 1).decode("ascii", "replace") == token
    except OSError:
        return False


def worker_name(workerid: str, host: str | None = None) -> str:
    """``gw3@host``: which worker on which machine produced a record."""
    return f"{workerid}@{host or socket.gethostname()}"


def own_tool(context: RoundContext, tool_root: Path) -> tuple[ToolInfo | None, str | None]:
    """The tool built on this machine from the controller's spec, or why this worker refuses.

    A requirement is installed here (as of the round's ``exclude_newer``); a source checkout must
    be at the controller's path at the controller's commit, clean; the installed tool must be the
    controller's version. Never silently other code.
    """
    want = context.tool
    if want is None:
        return None, None
    source = want.source
    spec: str | None = None
    if source == "requirement":
        spec = want.spec
    elif source == "checkout":
        spec = context.tool_checkout
        if not spec or not Path(spec).is_dir():
            return None, f"the obelize checkout {spec} is not on this machine; clone it there at commit {want.commit}"
        if want.tree_dirty is not False or not want.commit:
            return None, (
                f"the controller's obelize checkout {spec} has uncommitted changes (or no commit); "
                "a remote worker cannot run the same code: commit them"
            )
    try:
        info = resolve_tool(spec, tool_root=tool_root, exclude_newer=context.exclude_newer)
    except ToolError as exc:
        return None, f"cannot build the tool here: {exc}"
    if info.version != want.version:
        return None, f"this machine's obelize is {info.version}, the controller's is {want.version}"
    if source == "checkout" and (info.commit != want.commit or info.tree_dirty is not False):
        state = "with uncommitted changes" if info.tree_dirty else "unreadable" if info.commit is None else ""
        return None, (
            f"the obelize checkout {spec} here is at {info.commit} {state}".rstrip()
            + f"; the controller runs {want.commit}"
        )
    return info, None


def file_sha256(path: Path) -> str | None:
    """The file's sha256, or None when it cannot be read."""
    try:
        return sha256_bytes(Path(path).read_bytes())
    except OSError:
        return None


def clone_refusal(context: RoundContext, own: Mapping[str, str], own_commit: Callable[[], str | None]) -> str | None:
    """Why this machine's clone cannot stand in for the controller's: another case file or commit."""
    cases = own.get("cases_path")
    if context.cases_sha256 is not None and cases and file_sha256(Path(cases)) != context.cases_sha256:
        return (
            f"the case file {cases} here is not the controller's "
            f"(sha256 {context.cases_sha256[:12]}); check out the controller's commit"
        )
    want = context.harness.commit
    if want:
        have = own_commit()
        if have != want:
            return f"this clone is at {have}, the controller's at {want}; check out the same commit"
    return None


def localize(
    context: RoundContext,
    *,
    workerid: str,
    own: Mapping[str, str],
    environ: Mapping[str, str] = os.environ,
    host: str | None = None,
    own_commit: Callable[[], str | None] = lambda: None,
) -> RoundContext:
    """The context this worker runs with: the controller's where it sees the controller's paths,
    else the same specs over this machine's own paths.

    ``own`` holds this worker's ``project_root``, ``cases_path``, ``fixtures_dir`` and
    ``results_dir``, found from its own rootdir. ``OBELIZE_BENCH_WORK`` always wins, so a
    worker may be given its own work root even beside the controller. ``own_commit`` tells the
    commit of this worker's clone (asked only of a worker that derives its own paths).
    """
    name = worker_name(workerid, host)
    override = environ.get(WORK_ENV)
    if not override and shares_controller_paths(context):
        return context.model_copy(update={"worker": name})
    work_root = Path(override).expanduser().resolve() if override else default_work_root()
    cache = environ.get(REPO_CACHE_ENV)
    refusal = clone_refusal(context, own, own_commit)
    tool, tool_refusal = (context.tool, None) if refusal is not None else own_tool(context, work_root / "tools")
    refusal = refusal or tool_refusal
    return context.model_copy(
        update={
            "worker": name,
            "remote": True,
            "refusal": refusal,
            "work_root": str(work_root),
            "env_templates": None,  # the controller's folder is not this machine's: its own work root's
            "uv_cache": str(default_uv_cache(work_root, environ)),
            "repo_cache": str(Path(cache).expanduser().resolve()) if cache else None,
            "tool": tool if refusal is None else context.tool,
            "project_root": own.get("project_root", context.project_root),
            "cases_path": own.get("cases_path", context.cases_path),
            "fixtures_dir": own.get("fixtures_dir", context.fixtures_dir),
            "results_dir": own.get("results_dir", context.results_dir),
        }
    )


def logs_of(context: RoundContext, folder: str) -> str:
    """Where a case's logs are, as the controller's terminal should print it."""
    path = Path(context.work_root) / context.round_label / f"{folder}.logs"
    return f"{context.worker}:{path}" if context.remote and context.worker else str(path)


__all__ = [
    "REPO_CACHE_ENV",
    "WORK_ENV",
    "clone_refusal",
    "file_sha256",
    "localize",
    "logs_of",
    "own_tool",
    "shares_controller_paths",
    "tidy_on_worker",
    "worker_name",
    "write_session_marker",
]


def tidy_on_worker(context: RoundContext, folder: str, tier: str, keep: str) -> None:
    """``--bench-keep`` on a remote worker's own disk (the controller cannot reach it)."""
    if keeps_checkout(keep, tier == "error"):
        return

    remove_checkout(Path(context.work_root), context.round_label, folder)
