"""The tool under test: which obelize runs, how it is invoked, and its ``fix`` step.

``resolve_tool`` runs once on the controller and its ``ToolInfo`` travels to the workers as JSON.
Three sources:

* ``None``: the obelize installed beside the harness, run by ``sys.executable``.
* a requirement pinned with ``==`` (``obelize==0.7.0``): a tool venv of its own under
  ``tool_root`` (``uv venv`` with the running interpreter, then ``uv pip install``), reused while
  its marker names the same spec and interpreter.  Creation is serialised with a lock file, so
  xdist workers (or two rounds) never build one venv at once.
* a path to an obelize source checkout: a tool venv with the checkout installed *editable*, so
  the code that runs is the checkout's own ``src/`` as it is on disk (the protocol wants the
  round to name the code that ran, not an installed copy), while its dependencies come from the
  checkout's own pyproject.  A probe checks ``obelize`` is really imported from the checkout.
  The commit and dirty flag come from git; both are null for a release.

obelize always runs isolated (``python -I``): the checkout under test is the working directory of
the fix step, and without ``-I`` a repository's own ``yaml.py`` or ``obelize/`` would be imported
in place of the tool's.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pytest_obelize_bench.errors import CaseError
from pytest_obelize_bench.locks import exclusive_lock
from pytest_obelize_bench.runfolder import Artefacts, locate_run_folder, read_artefacts
from pytest_obelize_bench.steps import Runner, last_words

#: obelize fix exit codes after which obelize has written a run folder (behaviour reference §16):
#: 0 clean or nothing applies, 3 verification failed (files stay written), 4 nothing written or
#: rows withheld, 5 refused by the tree gate or a repo-config verify command refused, 6 written
#: without a verdict (every apply without --verify).  1 (run folder not writable, planning error,
#: invalid bundled pack), 2 (usage) and 7 (invalid user pack or plugin) write no run folder.
DOCUMENTED_EXIT_CODES: tuple[int, ...] = (0, 3, 4, 5, 6)
#: run.json ``refused[]`` codes that refuse the whole apply because of the checkout's git state.
TREE_REFUSALS = frozenset({"tree_dirty", "tree_unknown"})
FIX_TIMEOUT_S = 900.0
VENV_TIMEOUT_S = 300.0
INSTALL_TIMEOUT_S = 900.0
PROBE_TIMEOUT_S = 120.0
#: Network and TLS settings a tool install needs to reach the package index (never credentials
#: of a service: those stay out, with the HOME of the harness's user).
INSTALL_ENVIRONMENT: tuple[str, ...] = (
    "PATH",
    "LANG",
    "LC_ALL",
    "TMPDIR",
    "UV_CACHE_DIR",
    "UV_PYTHON_INSTALL_DIR",
    "UV_INDEX_URL",
    "UV_DEFAULT_INDEX",
    "UV_EXTRA_INDEX_URL",
    "UV_INDEX",
    "UV_EXCLUDE_NEWER",
    "UV_NATIVE_TLS",
    "UV_SYSTEM_CERTS",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
)
_MARKER = "bench-tool.json"

Source = Literal["installed", "requirement", "checkout"]

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

#: Runs in the tool's interpreter: the pack's sha256 and its ScanSpec digest, from obelize's own
#: loader; a field the tool version cannot answer stays null.
PACK_PROGRAM = """\
import json, sys
out = {"pack": sys.argv[1], "pack_sha256": None, "spec_sha256": None}
try:
    from obelize.packs import loader
    loaded = loader.load(sys.argv[1])
    out["pack_sha256"] = loaded.sha256
    out["spec_sha256"] = loader.spec_digest(loader.to_scan_spec(loaded))
except Exception:
    pass
print(json.dumps(out))
"""

_RUN_MAIN = "import sys; from obelize.cli import main; sys.exit(main())"
_HEX64 = re.compile(r"[0-9a-f]{64}")


class ToolError(Exception):
    """The tool cannot be resolved; the message is one line a user can act on."""


@dataclass(frozen=True)
class ToolInfo:
    """How to run the obelize under test, and what it is (provenance for every record)."""

    argv_prefix: tuple[str, ...]
    python: str
    version: str
    commit: str | None
    tree_dirty: bool | None
    source: Source
    spec: str | None

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> ToolInfo:
        try:
            data = json.loads(text)
        except ValueError as error:
            raise ToolError(f"tool info is not JSON: {error}") from None
        fields = {field.name for field in dataclasses.fields(cls)}
        if not isinstance(data, dict) or set(data) != fields:
            raise ToolError(f"tool info must be an object with exactly the keys {sorted(fields)}")
        prefix = data["argv_prefix"]
        ok = (
            isinstance(prefix, list)
            and prefix
            and all(isinstance(arg, str) for arg in prefix)
            and isinstance(data["python"], str)
            and isinstance(data["version"], str)
            and (data["commit"] is None or isinstance(data["commit"], str))
            and (data["tree_dirty"] is None or isinstance(data["tree_dirty"], bool))
            and data["source"] in ("installed", "requirement", "checkout")
            and (data["spec"] is None or isinstance(data["spec"], str))
        )
        if not ok:
            raise ToolError("tool info has a field of the wrong type")
        return cls(**{**data, "argv_prefix": tuple(prefix)})


# -- running the harness's own setup commands -----------------------------------------------


def _install_environment(home: Path) -> dict[str, str]:
    env = {name: os.environ[name] for name in INSTALL_ENVIRONMENT if name in os.environ}
    env["HOME"] = os.fspath(home)
    env["UV_PYTHON_DOWNLOADS"] = "never"
    return env


def _execute(
    argv: Sequence[str], *, timeout: float, cwd: Path, env: Mapping[str, str], log: Path
) -> tuple[int, str, bool]:
    """Run one setup command through the project's executor: (exit code, output tail, timed out)."""
    from pytest_obelize_bench.executor import ProcessExecutor

    completed = ProcessExecutor().run(list(argv), cwd=cwd, env=env, timeout=timeout, log=log)
    text = completed.output(1 << 20)
    return completed.exit_code, text, completed.timed_out


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else "(no output)"


def _probe(python: str, *, cwd: Path, log: Path) -> dict[str, Any]:
    env = {name: os.environ[name] for name in ("PATH", "LANG", "LC_ALL", "TMPDIR") if name in os.environ}
    code, output, timed_out = _execute(
        [python, "-I", "-c", PROBE_PROGRAM], timeout=PROBE_TIMEOUT_S, cwd=cwd, env=env, log=log
    )
    if timed_out or code != 0:
        raise ToolError(f"{python} could not be asked which obelize it imports: {_last_line(output)}")
    try:
        answer = json.loads(output.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise ToolError(f"{python} gave no answer about obelize: {_last_line(output)}") from None
    if not isinstance(answer, dict) or not answer.get("file"):
        raise ToolError(f"{python} cannot import obelize")
    return answer


def _info(
    python: str,
    answer: Mapping[str, Any],
    *,
    source: Source,
    spec: str | None,
    commit: str | None = None,
    tree_dirty: bool | None = None,
) -> ToolInfo:
    version = answer.get("module_version") or answer.get("version")
    if not isinstance(version, str) or not version:
        raise ToolError(f"{python} imports an obelize that does not say its version")
    prefix = (python, "-I", "-m", "obelize") if answer.get("main") else (python, "-I", "-c", _RUN_MAIN)
    return ToolInfo(
        argv_prefix=prefix,
        python=python,
        version=version,
        commit=commit,
        tree_dirty=tree_dirty,
        source=source,
        spec=spec,
    )


# -- tool venvs -----------------------------------------------------------------------------


def _venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _read_marker(venv: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((venv / _MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write_marker(venv: Path, marker: Mapping[str, Any]) -> None:
    handle, temporary = tempfile.mkstemp(prefix=f".{_MARKER}.", dir=venv)
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        json.dump(dict(marker), stream, sort_keys=True)
    os.replace(temporary, venv / _MARKER)


def _uv() -> str:
    try:
        from uv import find_uv_bin
    except ImportError:
        raise ToolError("the uv package is not installed beside the harness; it builds tool venvs") from None
    return os.fspath(find_uv_bin())


def _ensure_venv(venv: Path, marker: Mapping[str, Any], install: Sequence[str], *, what: str) -> str:
    """The python of ``venv`` built to ``marker``: reused if its marker matches, else rebuilt.

    Holds ``<venv>.lock`` while it looks and builds.  The marker is written last, so a venv whose
    build was interrupted is never reused.
    """
    root = venv.parent
    root.mkdir(parents=True, exist_ok=True)
    python = _venv_python(venv)
    with exclusive_lock(root / f"{venv.name}.lock"):
        if _read_marker(venv) == dict(marker) and python.exists():
            return os.fspath(python)
        if venv.exists() or venv.is_symlink():
            if venv.is_symlink() or not venv.is_dir():
                venv.unlink()
            else:
                shutil.rmtree(venv)
        home = root / "home"
        home.mkdir(exist_ok=True)
        env = _install_environment(home)
        uv = _uv()
        logs = root / "logs"
        code, output, timed_out = _execute(
            [uv, "venv", "--quiet", "--python", sys.executable, os.fspath(venv)],
            timeout=VENV_TIMEOUT_S,
            cwd=root,
            env=env,
            log=logs / f"{venv.name}.venv.log",
        )
        if timed_out or code != 0:
            raise ToolError(f"{what}: uv venv failed (exit {code}): {_last_line(output)}")
        code, output, timed_out = _execute(
            [uv, "pip", "install", "--python", os.fspath(python), *install],
            timeout=INSTALL_TIMEOUT_S,
            cwd=root,
            env=env,
            log=logs / f"{venv.name}.install.log",
        )
        if timed_out:
            raise ToolError(f"{what}: uv pip install outlasted {INSTALL_TIMEOUT_S:g}s")
        if code != 0:
            raise ToolError(f"{what}: uv pip install failed (exit {code}): {_last_line(output)}")
        _write_marker(venv, marker)
        return os.fspath(python)


def _marker_base(spec: str) -> dict[str, Any]:
    return {"spec": spec, "python": sys.executable, "python_version": sys.version}


def _parse_requirement(spec: str) -> Any:
    """The spec as a ``packaging`` Requirement, or None when it is not one."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return Requirement(spec)
    except InvalidRequirement:
        return None


def _resolve_requirement(spec: str, tool_root: Path) -> ToolInfo:
    from packaging.utils import canonicalize_name
    from packaging.version import InvalidVersion, Version

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
        pinned = Version(specifiers[0].version)
    except InvalidVersion:
        raise ToolError(f"obelize spec {spec!r}: {specifiers[0].version!r} is not a version") from None
    canonical = f"obelize=={pinned}"
    venv = Path(tool_root) / f"obelize-{pinned}"
    python = _ensure_venv(venv, _marker_base(canonical), [canonical], what=spec)
    answer = _probe(python, cwd=Path(tool_root), log=Path(tool_root) / "logs" / f"{venv.name}.probe.log")
    info = _info(python, answer, source="requirement", spec=spec)
    try:
        if Version(info.version) != pinned:
            raise ToolError(f"{spec}: the tool venv imports obelize {info.version}")
    except InvalidVersion:
        raise ToolError(f"{spec}: the tool venv imports obelize {info.version!r}, not a version") from None
    return info


def _git(checkout: Path, *args: str) -> str | None:
    """``git -C <checkout> <args>`` output, or None when git cannot say."""
    env = {name: os.environ[name] for name in ("PATH", "LANG", "LC_ALL", "TMPDIR") if name in os.environ}
    with tempfile.TemporaryDirectory(prefix="obelize-bench-git-") as scratch:
        env.update({"HOME": scratch, "GIT_CONFIG_NOSYSTEM": "1", "GIT_OPTIONAL_LOCKS": "0"})
        try:
            code, output, timed_out = _execute(
                ["git", "-c", f"safe.directory={checkout}", "-C", os.fspath(checkout), *args],
                timeout=60,
                cwd=Path(scratch),
                env=env,
                log=Path(scratch) / "git.log",
            )
        except OSError:
            return None
    if timed_out or code != 0:
        return None
    return output


def _resolve_checkout(spec: str, tool_root: Path) -> ToolInfo:
    path = Path(spec).expanduser()
    if not path.is_dir():
        raise ToolError(f"obelize spec {spec!r} is not a directory")
    path = path.resolve()
    package = next((p for p in (path / "src" / "obelize", path / "obelize") if (p / "__init__.py").is_file()), None)
    pyproject = path / "pyproject.toml"
    if package is None or not pyproject.is_file():
        raise ToolError(f"{spec} is not an obelize source checkout (no pyproject.toml beside src/obelize/)")
    project_sha = hashlib.sha256(pyproject.read_bytes()).hexdigest()
    venv = Path(tool_root) / f"checkout-{hashlib.sha256(os.fspath(path).encode()).hexdigest()[:16]}"
    marker = {**_marker_base(os.fspath(path)), "pyproject_sha256": project_sha}
    python = _ensure_venv(venv, marker, ["--editable", os.fspath(path)], what=spec)
    answer = _probe(python, cwd=Path(tool_root), log=Path(tool_root) / "logs" / f"{venv.name}.probe.log")
    imported = Path(str(answer["file"])).resolve()
    if not imported.is_relative_to(package.resolve()):
        raise ToolError(f"{spec}: the tool venv imports obelize from {imported}, not from the checkout")
    head = _git(path, "rev-parse", "HEAD")
    commit = head.strip() if head and re.fullmatch(r"[0-9a-f]{40,64}", head.strip()) else None
    status = _git(path, "status", "--porcelain") if commit else None
    dirty = None if status is None else bool(status.strip())
    return _info(python, answer, source="checkout", spec=spec, commit=commit, tree_dirty=dirty)


def resolve_tool(spec: str | None, *, tool_root: Path) -> ToolInfo:
    """Resolve which obelize the round runs (see the module docstring); ``ToolError`` if it cannot.

    A spec that parses as a requirement must pin obelize with ``==``; one that does not, and
    contains ``/`` or starts with ``.`` or ``~``, is a path to a source checkout.
    """
    tool_root = Path(tool_root)
    if spec is None:
        with tempfile.TemporaryDirectory(prefix="obelize-bench-probe-") as scratch:
            answer = _probe(sys.executable, cwd=Path(scratch), log=Path(scratch) / "probe.log")
        return _info(sys.executable, answer, source="installed", spec=None)
    text = spec.strip()
    if not text:
        raise ToolError("the obelize spec is empty; give obelize==X.Y.Z or a path to a checkout")
    if _parse_requirement(text) is None and ("/" in text or text.startswith((".", "~"))):
        return _resolve_checkout(text, tool_root)
    return _resolve_requirement(text, tool_root)


# -- provenance -----------------------------------------------------------------------------


def pack_provenance(tool: ToolInfo, pack: str) -> dict[str, str | None]:
    """``{"pack", "pack_sha256", "spec_sha256"}`` from obelize's own pack loader, run in the tool.

    Either hash is null when the tool version has no such API or cannot load the pack; this never
    raises for the tool's sake.
    """
    result: dict[str, str | None] = {"pack": pack, "pack_sha256": None, "spec_sha256": None}
    env = {name: os.environ[name] for name in ("PATH", "LANG", "LC_ALL", "TMPDIR") if name in os.environ}
    with tempfile.TemporaryDirectory(prefix="obelize-bench-pack-") as scratch:
        env["HOME"] = scratch
        try:
            code, output, timed_out = _execute(
                [tool.python, "-I", "-c", PACK_PROGRAM, pack],
                timeout=PROBE_TIMEOUT_S,
                cwd=Path(scratch),
                env=env,
                log=Path(scratch) / "pack.log",
            )
        except OSError:
            return result
    if timed_out or code != 0:
        return result
    try:
        answer = json.loads(output.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return result
    if isinstance(answer, dict):
        for key in ("pack_sha256", "spec_sha256"):
            value = answer.get(key)
            if isinstance(value, str) and _HEX64.fullmatch(value):
                result[key] = value
    return result


# -- the fix step ---------------------------------------------------------------------------


def fix_argv(tool: ToolInfo, *, checkout: Path, pack: str) -> list[str]:
    """``obelize fix`` as step 6 runs it: apply, never prompt, no model, JSON, and no --verify."""
    return [
        *tool.argv_prefix,
        "fix",
        "--repo",
        os.fspath(checkout),
        "--pack",
        pack,
        "--apply",
        "--non-interactive",
        "--model",
        "none",
        "--json",
    ]


def _pointer(checkout: Path) -> str | None:
    """What ``.obelize/latest`` names before the run (a repository may commit one), if anything."""
    try:
        return locate_run_folder(checkout).name
    except CaseError:
        return None


def run_fix(
    runner: Runner,
    tool: ToolInfo,
    *,
    checkout: Path,
    pack: str,
    timeout: float = FIX_TIMEOUT_S,
) -> tuple[Artefacts, float]:
    """Step 6 ``fix``: run obelize, then read its run folder; (artefacts, runtime in seconds).

    Grading comes from the run folder, never from the exit code; the code only says whether
    there is a run folder to read (``DOCUMENTED_EXIT_CODES``).  A run whose pointer still names
    the folder that was there before, or whose apply the tree gate refused (the harness left
    the checkout dirty, so nothing about the migration was measured), is an error, not a grade.
    """
    checkout = Path(checkout)
    before = _pointer(checkout)
    argv = fix_argv(tool, checkout=checkout, pack=pack)
    completed = runner.run(6, "fix", argv, timeout=timeout, cwd=checkout)
    if completed.timed_out:
        raise CaseError("fix", "timeout", f"obelize fix outlasted {timeout:g}s")
    if completed.launch_error is not None:
        raise CaseError("fix", "obelize_failed", "obelize could not be started; see the step log")
    if completed.exit_code not in DOCUMENTED_EXIT_CODES:
        said = last_words(completed.output())
        raise CaseError(
            "fix",
            "obelize_failed",
            f"obelize fix exited {completed.exit_code}{': ' + said if said else ''}; see the step log",
        )
    folder = locate_run_folder(checkout)
    if before is not None and folder.name == before:
        raise CaseError("fix", "no_run_folder", ".obelize/latest still names the run that was there before obelize ran")
    artefacts = read_artefacts(folder, checkout)
    gate = sorted(set(artefacts.refused) & TREE_REFUSALS)
    if gate:
        raise CaseError(
            "fix",
            "obelize_failed",
            f"obelize refused the whole apply ({', '.join(gate)}): the checkout had uncommitted "
            "changes before step 6, so the run measured nothing",
        )
    return artefacts, completed.duration_s
