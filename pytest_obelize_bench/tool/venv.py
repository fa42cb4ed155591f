"""The controller's tool environment: which obelize the round runs, its venv, and its provenance.

``resolve_tool`` runs once per session on the controller; its ``ToolInfo`` travels to the workers
as JSON.  Three sources:

* ``None``: the obelize installed beside the harness, run by ``sys.executable``.
* a requirement pinned with ``==`` (``obelize==0.7.0``): a tool venv of its own under
  ``tool_root`` (``uv venv`` with the running interpreter, then ``uv pip install``).
* a path to an obelize source checkout: a tool venv with the checkout installed *editable*, so
  the code that runs is the checkout's own ``src/`` as it is on disk (the protocol wants the
  round to name the code that ran, not an installed copy), while its dependencies come from the
  checkout's own pyproject.  A probe checks ``obelize`` is really imported from the checkout.
  The commit and dirty flag come from git; both are null for a release.

A tool venv is kept across sessions under a folder named for its key: the spec, the install's
``exclude_newer`` (the round's, so the tool's dependencies resolve as of the same cutoff as every
other install) and the harness interpreter.  The same key finds the same venv and installs
nothing; a different cutoff builds a venv of its own beside it.

The release a requirement names is exempt from the cutoff: every obelize release may postdate
the round being replayed (round 1's cutoff is older than obelize 0.1.0).  Its install passes
``--exclude-newer-package obelize=<moment>``, the moment the venv was first built, so the named
release resolves as of then while every dependency still resolves as of the cutoff.  The spec
pins one release, so any moment after its upload installs the same files; the moment is kept in
the venv's marker (``exclude_newer_tool``), reported in the tool's provenance beside the cutoff,
and taken over unchanged when a later session reuses the venv.  Only the tool venv's install is
exempted: a case's own installs see ``UV_EXCLUDE_NEWER`` alone.  A marker written last says the
build finished; creation is serialised with a lock file, so xdist workers or two sessions never
build one venv at once.

obelize always runs isolated (``python -I``): the checkout under test is the working directory of
the fix step, and without ``-I`` a repository's own ``yaml.py`` or ``obelize/`` would be imported
in place of the tool's.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from pytest_obelize_bench._util.clock import utc_now
from pytest_obelize_bench._util.digests import sha256_bytes, sha256_text
from pytest_obelize_bench._util.locks import exclusive_lock
from pytest_obelize_bench.isolation.executor import Answer, run_program, step_environment
from pytest_obelize_bench.isolation.gitquery import git_output
from pytest_obelize_bench.isolation.policy import (
    BASE_ENVIRONMENT,
    NO_INTERPRETER_DOWNLOADS,
    TOOL_INSTALL_ENVIRONMENT,
    TOOL_INSTALL_S,
    TOOL_PROBE_S,
    TOOL_VENV_S,
    inherited,
    uv_binary,
)
from pytest_obelize_bench.tool.answers import keep_answer, kept_answers
from pytest_obelize_bench.tool.info import Source, ToolError, ToolInfo
from pytest_obelize_bench.tool.installed_answers import keep_probe, kept_probe

MARKER = "bench-tool.json"

#: Runs in the tool's interpreter: what obelize it imports, and whether ``-m obelize`` works.
PROBE_PROGRAM = """\
import importlib.metadata, importlib.util, json, sys
out = {"version": None, "module_version": None, "file": None, "main": False}
try:
    out["version"] = importlib.metadata.version("obelize")
except Exception:
    pass
try:
    spec = importlib.util.find_spec("obelize")
    if spec is not None:
        out["file"] = spec.origin
        import obelize
        value = getattr(obelize, "__version__", None)
        out["module_version"] = value if isinstance(value, str) else None
        out["main"] = importlib.util.find_spec("obelize.__main__") is not None
except Exception:
    pass
print(json.dumps(out))
"""

RUN_MAIN = "import sys; from obelize.cli import main; sys.exit(main())"  # an obelize with no -m obelize


def install_environment(home: Path, source: Mapping[str, str] = os.environ) -> dict[str, str]:
    """What building a tool venv sees: the allow-listed names, an own HOME, no interpreter downloads."""
    return step_environment(source, home=home, extra=NO_INTERPRETER_DOWNLOADS, allowed=TOOL_INSTALL_ENVIRONMENT)


def _execute(argv: Sequence[str], *, timeout: float, cwd: Path, env: Mapping[str, str], log: Path) -> Answer:
    return run_program(argv, env=env, timeout=timeout, cwd=cwd, log=log)


def _probe(python: str, *, cwd: Path, log: Path) -> dict[str, Any]:
    answer = _execute(
        [python, "-I", "-c", PROBE_PROGRAM], timeout=TOOL_PROBE_S, cwd=cwd, env=inherited(BASE_ENVIRONMENT), log=log
    )
    if answer.timed_out or answer.exit_code != 0:
        raise ToolError(f"{python} could not be asked which obelize it imports: {answer.last_line}")
    try:
        found = json.loads(answer.output.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise ToolError(f"{python} gave no answer about obelize: {answer.last_line}") from None
    if not isinstance(found, dict) or not found.get("file"):
        raise ToolError(f"{python} cannot import obelize")
    return found


def _info(
    python: str,
    answer: Mapping[str, Any],
    *,
    source: Source,
    spec: str | None,
    commit: str | None = None,
    tree_dirty: bool | None = None,
    exclude_newer_tool: str | None = None,
    commit_date: str | None = None,
    answers_marker: Mapping[str, str] | None = None,
) -> ToolInfo:
    version = answer.get("module_version") or answer.get("version")
    if not isinstance(version, str) or not version:
        raise ToolError(f"{python} imports an obelize that does not say its version")
    prefix = (python, "-I", "-m", "obelize") if answer.get("main") else (python, "-I", "-c", RUN_MAIN)
    return ToolInfo(
        argv_prefix=prefix,
        python=python,
        version=version,
        commit=commit,
        tree_dirty=tree_dirty,
        source=source,
        spec=spec,
        exclude_newer_tool=exclude_newer_tool,
        commit_date=commit_date,
        answers_marker=None if answers_marker is None else tuple(sorted(answers_marker.items())),
    )


# -- tool venvs -----------------------------------------------------------------------------


def _venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def read_marker(venv: Path) -> dict[str, Any] | None:
    """The key a finished tool venv was built to, or None (no venv, or its build never finished)."""
    try:
        data = json.loads((venv / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write_marker(venv: Path, marker: Mapping[str, Any]) -> None:
    handle, temporary = tempfile.mkstemp(prefix=f".{MARKER}.", dir=venv)
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        json.dump(dict(marker), stream, sort_keys=True)
    os.replace(temporary, venv / MARKER)


def _uv() -> str:
    try:
        return uv_binary()
    except ImportError:
        raise ToolError("the uv package is not installed beside the harness; it builds tool venvs") from None


def _remove(venv: Path) -> None:
    if venv.is_symlink() or (venv.exists() and not venv.is_dir()):
        venv.unlink()
    elif venv.exists():
        shutil.rmtree(venv)


#: The marker's field naming the moment the named release was exempted to.
EXEMPT_FIELD = "exclude_newer_tool"
#: The marker's field saying the packages were compiled when installed: in the read-only sandbox no
#: call can keep a bytecode cache, and without it each compiled obelize again (1.4 s a small scan, not 0.8).
BYTECODE_FIELD, COMPILED = "bytecode", "compiled"


def utc_moment() -> str:
    """Now, as uv reads a cutoff: ``YYYY-MM-DDTHH:MM:SSZ``."""
    return utc_now()


def exempt_argv(cutoff: str | None, exempt: str | None, moment: str | None) -> list[str]:
    """uv's cutoff options for a tool venv: the round's cutoff, and the named release's exemption."""
    if not cutoff:
        return []
    argv = ["--exclude-newer", str(cutoff)]
    if exempt and moment:
        argv += ["--exclude-newer-package", f"{exempt}={moment}"]
    return argv


def _ensure_venv(
    venv: Path, marker: Mapping[str, Any], install: Sequence[str], *, what: str, exempt: str | None = None
) -> tuple[str, dict[str, Any]]:
    """The python of ``venv`` built to ``marker``, and the marker it was built to.

    Reused if its marker matches, else rebuilt.  Holds ``<venv>.lock`` while it looks and builds.
    The marker is written last, so a venv whose build was interrupted is never reused.
    ``marker["exclude_newer"]``, when set, is the cutoff the install resolves at; with ``exempt``
    (a distribution name) that distribution is exempt from it, as of the moment a kept venv's
    marker names (``exclude_newer_tool``) or, for a new build, now.
    """
    root = venv.parent
    root.mkdir(parents=True, exist_ok=True)
    python = _venv_python(venv)
    wanted = {**marker, BYTECODE_FIELD: COMPILED}
    with exclusive_lock(root / f"{venv.name}.lock"):
        found = read_marker(venv)
        if exempt and wanted.get("exclude_newer"):
            kept = found.get(EXEMPT_FIELD) if found is not None else None
            same = found is not None and _built_to(found) == _built_to(wanted)
            wanted[EXEMPT_FIELD] = kept if same and isinstance(kept, str) and kept else utc_moment()
        if found == wanted and python.exists():
            return os.fspath(python), wanted
        _remove(venv)
        home = root / "home"
        home.mkdir(exist_ok=True)
        env = install_environment(home)
        uv = _uv()
        logs = root / "logs"
        made = _execute(
            [uv, "venv", "--quiet", "--python", sys.executable, os.fspath(venv)],
            timeout=TOOL_VENV_S,
            cwd=root,
            env=env,
            log=logs / f"{venv.name}.venv.log",
        )
        if made.timed_out or made.exit_code != 0:
            raise ToolError(f"{what}: uv venv failed (exit {made.exit_code}): {made.last_line}")
        pinned = exempt_argv(wanted.get("exclude_newer"), exempt, wanted.get(EXEMPT_FIELD))
        done = _execute(
            [uv, "pip", "install", "--compile-bytecode", "--python", os.fspath(python), *pinned, *install],
            timeout=TOOL_INSTALL_S,
            cwd=root,
            env=env,
            log=logs / f"{venv.name}.install.log",
        )
        if done.timed_out:
            raise ToolError(f"{what}: uv pip install outlasted {TOOL_INSTALL_S:g}s")
        if done.exit_code != 0:
            raise ToolError(f"{what}: uv pip install failed (exit {done.exit_code}): {done.last_line}")
        _write_marker(venv, wanted)
        return os.fspath(python), wanted


def _built_to(marker: Mapping[str, Any]) -> dict[str, Any]:
    """A marker without its exemption moment and bytecode: two alike here install the same files."""
    return {key: value for key, value in marker.items() if key not in (EXEMPT_FIELD, BYTECODE_FIELD)}


def venv_key(spec: str, exclude_newer: str | None, **more: str) -> dict[str, Any]:
    """What a tool venv is built to: the spec, the install's cutoff, the harness interpreter."""
    return {
        "spec": spec,
        "exclude_newer": exclude_newer,
        "python": sys.executable,
        "python_version": sys.version,
        **more,
    }


def key_digest(key: Mapping[str, Any]) -> str:
    """Twelve hex digits naming a tool venv's folder after its key."""
    return sha256_text(json.dumps(dict(key), sort_keys=True))[:12]


def _parse_requirement(spec: str) -> Any:
    """The spec as a ``packaging`` Requirement, or None when it is not one."""
    try:
        return Requirement(spec)
    except InvalidRequirement:
        return None


def _pinned_version(spec: str) -> Any:
    """The one release ``spec`` pins (a ``packaging`` Version), or ``ToolError`` saying what is wrong."""
    requirement = _parse_requirement(spec)
    if requirement is None:
        raise ToolError(
            f"obelize spec {spec!r} is neither a requirement such as obelize==0.7.0 nor a path "
            "(write ./name for a folder in the current directory)"
        )
    if canonicalize_name(requirement.name) != "obelize":
        raise ToolError(f"obelize spec {spec!r} names {requirement.name!r}, not obelize")
    if requirement.url or requirement.extras or requirement.marker:
        raise ToolError(f"obelize spec {spec!r}: give a plain pin such as obelize==0.7.0 (no URL, extras or marker)")
    specifiers = list(requirement.specifier)
    if len(specifiers) != 1 or specifiers[0].operator != "==" or "*" in specifiers[0].version:
        raise ToolError(f"obelize spec {spec!r} is not pinned; name one release, e.g. obelize==0.7.0")
    try:
        return Version(specifiers[0].version)
    except InvalidVersion:
        raise ToolError(f"obelize spec {spec!r}: {specifiers[0].version!r} is not a version") from None


def _resolve_requirement(spec: str, tool_root: Path, exclude_newer: str | None) -> ToolInfo:
    pinned = _pinned_version(spec)
    canonical = f"obelize=={pinned}"
    key = venv_key(canonical, exclude_newer)
    venv = tool_root / f"obelize-{pinned}-{key_digest(key)}"
    python, built = _ensure_venv(venv, key, [canonical], what=spec, exempt="obelize")
    answer = kept_answers(venv, built).get("probe")  # built: the marker the venv holds
    if not isinstance(answer, dict) or not answer.get("file"):  # asked once per venv, not per session
        answer = _probe(python, cwd=tool_root, log=tool_root / "logs" / f"{venv.name}.probe.log")
        keep_answer(venv, built, "probe", answer)
    info = _info(python, answer, source="requirement", spec=spec, exclude_newer_tool=built.get(EXEMPT_FIELD))
    try:
        if Version(info.version) != pinned:
            raise ToolError(f"{spec}: the tool venv imports obelize {info.version}")
    except InvalidVersion:
        raise ToolError(f"{spec}: the tool venv imports obelize {info.version!r}, not a version") from None
    return info


def _resolve_checkout(spec: str, tool_root: Path, exclude_newer: str | None) -> ToolInfo:
    path = Path(spec).expanduser()
    if not path.is_dir():
        raise ToolError(f"obelize spec {spec!r} is not a directory")
    path = path.resolve()
    package = next((p for p in (path / "src" / "obelize", path / "obelize") if (p / "__init__.py").is_file()), None)
    pyproject = path / "pyproject.toml"
    if package is None or not pyproject.is_file():
        raise ToolError(f"{spec} is not an obelize source checkout (no pyproject.toml beside src/obelize/)")
    # The folder is named for the checkout and the cutoff; a changed pyproject rebuilds it in place.
    venv = tool_root / f"checkout-{key_digest(venv_key(os.fspath(path), exclude_newer))}"
    project_sha = sha256_bytes(pyproject.read_bytes())
    marker = venv_key(os.fspath(path), exclude_newer, pyproject_sha256=project_sha)
    python, _ = _ensure_venv(venv, marker, ["--editable", os.fspath(path)], what=spec)
    answer = _probe(python, cwd=tool_root, log=tool_root / "logs" / f"{venv.name}.probe.log")
    imported = Path(str(answer["file"])).resolve()
    if not imported.is_relative_to(package.resolve()):
        raise ToolError(f"{spec}: the tool venv imports obelize from {imported}, not from the checkout")
    head = git_output(path, "rev-parse", "HEAD", own_home=True)
    commit = head.strip() if head and re.fullmatch(r"[0-9a-f]{40,64}", head.strip()) else None
    status = git_output(path, "status", "--porcelain", own_home=True) if commit else None
    dirty = None if status is None else bool(status.strip())
    date = git_output(path, "log", "-1", "--format=%cI", "HEAD", own_home=True) if commit else None
    return _info(
        python, answer, source="checkout", spec=spec, commit=commit, tree_dirty=dirty,
        commit_date=date.strip() or None if date else None,
    )  # fmt: skip


def resolve_tool(spec: str | None, *, tool_root: Path, exclude_newer: str | None = None) -> ToolInfo:
    """Resolve which obelize the session runs (see the module docstring); ``ToolError`` if it cannot.

    A spec that parses as a requirement must pin obelize with ``==``; one that does not, and
    contains ``/`` or starts with ``.`` or ``~``, is a path to a source checkout.  A tool venv's
    install resolves as of ``exclude_newer``, or of the harness's ``UV_EXCLUDE_NEWER`` without it.
    """
    tool_root = Path(tool_root)
    if spec is None:
        kept = kept_probe(sys.executable)  # while nothing it imports changed (installed_answers.py)
        if kept is not None:
            return _info(sys.executable, kept[0], source="installed", spec=None, answers_marker=kept[1])
        with tempfile.TemporaryDirectory(prefix="obelize-bench-probe-") as scratch:
            answer = _probe(sys.executable, cwd=Path(scratch), log=Path(scratch) / "probe.log")
        marker = keep_probe(sys.executable, answer)
        return _info(sys.executable, answer, source="installed", spec=None, answers_marker=marker)
    text = spec.strip()
    if not text:
        raise ToolError("the obelize spec is empty; give obelize==X.Y.Z or a path to a checkout")
    cutoff = exclude_newer or os.environ.get("UV_EXCLUDE_NEWER") or None
    if _parse_requirement(text) is None and ("/" in text or text.startswith((".", "~"))):
        return _resolve_checkout(text, tool_root, cutoff)
    return _resolve_requirement(text, tool_root, cutoff)


__all__ = [
    "BYTECODE_FIELD",
    "COMPILED",
    "EXEMPT_FIELD",
    "MARKER",
    "PROBE_PROGRAM",
    "exempt_argv",
    "install_environment",
    "key_digest",
    "read_marker",
    "resolve_tool",
    "utc_moment",
    "venv_key",
]
