"""Step 2: the case's interpreter and its virtualenv, made by uv and asked what it runs.

Why it is strict: a bare ``--python 3.10`` has resolved to two interpreters on two runs.  So the
case names a full uv interpreter key, uv may not download one (``UV_PYTHON_DOWNLOADS=never``), and
the new venv's own interpreter is asked what it is.

Interpreter discovery: uv finds interpreters in its managed installations and on the PATH it is
given.  Version-manager *shims* on PATH (pyenv's ``python3.12``) are unreliable for that: a shim
answers only for the version selected where it runs (a ``.python-version`` in the checkout changes
it) and fails for every other.  So the ``venv`` step sees a PATH of: the caller's ``search_path``,
then each pyenv version's ``bin`` (newest first; ``discover_pyenv``), then the step's PATH with
every ``shims`` directory removed.  What was chosen is recorded (key, path, ``sys.version``).

The venv is made ``--relocatable`` (its scripts find their interpreter beside themselves), so a
template environment copied or mounted under another path still runs its own ``pytest``.
"""

from __future__ import annotations

import ast
import functools
import inspect
import json
import os
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NamedTuple

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench.isolation.executor import run_program
from pytest_obelize_bench.isolation.policy import (
    ASK_INTERPRETER_S,
    DEFAULT_LIMITS,
    NO_INTERPRETER_DOWNLOADS,
    UV_VERSION_S,
    Step,
    uv_binary,
)
from pytest_obelize_bench.isolation.steps import StepRunner

VENV_TIMEOUT_S = DEFAULT_LIMITS["venv"]
RESOLVE_TIMEOUT_S = ASK_INTERPRETER_S

_KEY = re.compile(
    r"(?P<implementation>cpython|pypy|graalpy)-"
    r"(?P<major>\d+)\.(?P<minor>\d+)\.(?P<patch>\d+)(?P<pre>(?:a|b|rc)\d+)?"
    r"(?P<variant>(?:\+(?:freethreaded|debug))*)-"
    r"(?P<os>[a-z][a-z0-9_]*)-(?P<arch>[a-z0-9_]+)-(?P<libc>[a-z][a-z0-9_]*)"
)
_PYENV_VERSION_DIR = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?[a-z0-9]*")


class InterpreterKey(NamedTuple):
    """A parsed uv interpreter key, e.g. ``cpython-3.12.9-macos-aarch64-none``."""

    implementation: str
    major: int
    minor: int
    version: str
    variant: str
    os: str
    arch: str
    libc: str


def parse_interpreter_key(key: str) -> InterpreterKey:
    """Parse a full uv key ``<implementation>-X.Y.Z[+variant]-<os>-<arch>-<libc>``.

    A malformed key raises ValueError with a message a case file's reader can act on.
    """
    match = _KEY.fullmatch(key) if isinstance(key, str) else None
    if match is None:
        raise ValueError(
            f"python {key!r} is not a full uv interpreter key: expected "
            "implementation-X.Y.Z-os-arch-libc, for example cpython-3.12.9-macos-aarch64-none"
        )
    return InterpreterKey(
        implementation=match["implementation"],
        major=int(match["major"]),
        minor=int(match["minor"]),
        version=f"{match['major']}.{match['minor']}.{match['patch']}{match['pre'] or ''}",
        variant=match["variant"],
        os=match["os"],
        arch=match["arch"],
        libc=match["libc"],
    )


def describe_interpreter() -> dict[str, str]:
    """What the running interpreter is, in uv's terms: key, executable, build, machine.

    Its source is also sent to each case interpreter (step 2 ``resolve``), so it is written for
    every Python uv can create a venv for: no newer syntax, stdlib only (the return annotation is
    dropped from what is sent).
    """
    # inside: this function's source is what the other interpreter runs, imports and all
    import platform
    import sys
    import sysconfig

    info = sys.version_info
    version = f"{info[0]}.{info[1]}.{info[2]}"
    if info[3] != "final":
        version += {"alpha": "a", "beta": "b", "candidate": "rc"}.get(info[3], info[3])
        version += str(info[4])
    variant = ""
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        variant += "+freethreaded"
    if hasattr(sys, "gettotalrefcount"):
        variant += "+debug"
    systems = {"darwin": "macos", "win32": "windows"}
    system = systems.get(sys.platform, sys.platform.rstrip("0123456789"))
    machine = platform.machine()
    arches = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64", "i386": "x86", "i686": "x86"}
    arch = arches.get(machine.lower(), machine.lower())
    libc = "none"
    if system == "linux":
        libc = "gnu" if platform.libc_ver()[0] == "glibc" else "musl"
    key = f"{sys.implementation.name}-{version}{variant}-{system}-{arch}-{libc}"
    return {
        "key": key,
        "executable": sys.executable,
        "build": " ".join(sys.version.split()),
        "machine": machine,
    }


def _program_of(function: Callable[[], object]) -> str:
    """``function``'s source without its docstring, then a line printing its result as JSON."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    definition = tree.body[0]
    assert isinstance(definition, ast.FunctionDef)
    if ast.get_docstring(definition) is not None:
        definition.body = definition.body[1:]
    definition.returns = None
    return ast.unparse(tree) + f"\nimport json\nprint(json.dumps({function.__name__}()))\n"


_RESOLVE_PROGRAM = _program_of(describe_interpreter)


def resolve_program() -> str:
    """The program that asks an interpreter what it is (``describe_interpreter`` as source)."""
    return _RESOLVE_PROGRAM


@functools.cache
def uv_version() -> str:
    """The version uv reports, e.g. ``0.13.9``: asked once per process (the uv binary is this package's)."""
    answer = run_program(
        [uv_binary(), "--version"], env={"PATH": os.environ.get("PATH", os.defpath)}, timeout=UV_VERSION_S
    )
    if not answer.ok:
        raise RuntimeError(f"uv --version failed (exit {answer.exit_code}): {answer.output[-300:]!r}")
    for line in answer.output.splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] == "uv":
            return words[1]
    raise RuntimeError(f"uv --version printed {answer.output[:300]!r}")


@dataclass(frozen=True)
class Interpreter:
    """The case interpreter: the key asked for, the key uv chose, and what it is."""

    requested: str
    used: str
    executable: Path
    build: str
    machine: str


def pyenv_interpreter_dirs(environ: Mapping[str, str] = os.environ) -> list[Path]:
    """``<PYENV_ROOT>/versions/<X.Y.Z>/bin`` of every installed pyenv version, newest first.

    Only directories named by a version (not virtualenv aliases, which are symlinks) and holding
    a ``python3``.  Newest first so that a ``minor`` request picks the newest patch release.
    """
    root = Path(environ["PYENV_ROOT"]) if environ.get("PYENV_ROOT") else Path.home() / ".pyenv"
    versions = root / "versions"
    found: list[tuple[tuple[int, int, int], str, Path]] = []
    try:
        entries = list(versions.iterdir())
    except OSError:
        return []
    for entry in entries:
        match = _PYENV_VERSION_DIR.fullmatch(entry.name)
        if match is None or entry.is_symlink() or not (entry / "bin" / "python3").exists():
            continue
        number = (int(match[1]), int(match[2]), int(match[3] or 0))
        found.append((number, entry.name, entry / "bin"))
    found.sort(key=lambda item: (item[0], item[1]), reverse=True)
    return [path for _, _, path in found]


def discovery_path(path: str | None, search_path: Sequence[Path] = (), *, discover_pyenv: bool = True) -> str:
    """The PATH the ``venv`` step gives uv: search_path, pyenv versions, then PATH minus shims."""
    entries: list[str] = [os.fspath(p) for p in search_path]
    if discover_pyenv:
        entries += [os.fspath(p) for p in pyenv_interpreter_dirs()]
    for entry in (path or "").split(os.pathsep):
        if entry and Path(entry).name != "shims":
            entries.append(entry)
    unique: list[str] = []
    for entry in entries:
        if entry not in unique:
            unique.append(entry)
    return os.pathsep.join(unique)


def minor_request(key: InterpreterKey) -> str:
    here = parse_interpreter_key(describe_interpreter()["key"])
    return f"{key.implementation}-{key.major}.{key.minor}{key.variant}-{here.os}-{here.arch}-{here.libc}"


def create_venv(
    runner: StepRunner,
    *,
    key: str,
    policy: Literal["exact", "minor"],
    venv: Path,
    search_path: Sequence[Path] = (),
    discover_pyenv: bool = True,
    timeout: float = VENV_TIMEOUT_S,
) -> Interpreter:
    """Step 2: ``uv venv`` for the case's interpreter key, then ask the venv what it runs.

    ``exact`` asks uv for the key as written; ``minor`` for the same implementation and minor
    version on this platform (the key names a macOS interpreter, the machine is Linux).  uv may not
    download an interpreter.  ``venv`` must not exist yet.  The environment of the ``venv`` step is
    the runner's without VIRTUAL_ENV and with the discovery PATH (see the module docstring).
    """
    if policy not in ("exact", "minor"):
        raise ValueError(f"interpreter policy {policy!r} is neither 'exact' nor 'minor'")
    try:
        wanted = parse_interpreter_key(key)
    except ValueError as error:
        raise CaseError("venv", "venv_failed", str(error)) from None
    request = key if policy == "exact" else minor_request(wanted)
    env = {k: v for k, v in runner.env.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX")}
    env.update(NO_INTERPRETER_DOWNLOADS)
    env["PATH"] = discovery_path(runner.env.get("PATH"), search_path, discover_pyenv=discover_pyenv)
    argv = [uv_binary(), "venv", "--no-config", "--no-project", "--relocatable", "--python", request, str(venv)]
    made = runner.run(Step.VENV, "venv", argv, timeout=timeout, env=env)
    missing = (
        made.exit_code != 0
        and not made.timed_out
        and made.launch_error is None
        and "No interpreter found" in made.output()
    )
    if missing and policy == "exact":
        raise CaseError(
            "venv",
            "venv_failed",
            # whole in a published record: the hint must fit the detail's cap with the longest key
            f"no interpreter {key} here (uv may not download one); --bench-interpreter=minor "
            f"would use a local {wanted.implementation} {wanted.major}.{wanted.minor} interpreter instead",
        )
    if missing:
        raise CaseError(
            "venv",
            "venv_failed",
            f"no local {wanted.implementation} {wanted.major}.{wanted.minor} interpreter for "
            f"{key}; put the bin directory of one on the interpreter search path",
        )
    runner.raise_for("venv", made, reason="venv_failed", timeout=timeout)

    python = Path(venv) / "bin" / "python"
    asked = runner.run(
        Step.VENV,
        "resolve",
        [str(python), "-I", "-c", _RESOLVE_PROGRAM],
        timeout=RESOLVE_TIMEOUT_S,
        reason="venv_failed",
    )
    lines = [line for line in asked.output().splitlines() if line.strip()]
    try:
        info = json.loads(lines[-1])
        used, executable = str(info["key"]), Path(info["executable"])
        build, machine = str(info["build"]), str(info["machine"])
    except (IndexError, ValueError, KeyError, TypeError):
        raise CaseError("resolve", "venv_failed", "the case interpreter did not say what it is") from None
    try:
        got = parse_interpreter_key(used)
    except ValueError:
        raise CaseError("resolve", "venv_failed", f"the case interpreter calls itself {used!r}") from None
    if policy == "exact" and used != key:
        raise CaseError("resolve", "venv_failed", f"uv chose {used} when asked for {key}")
    if policy == "minor" and (got.implementation, got.major, got.minor, got.variant) != (
        wanted.implementation,
        wanted.major,
        wanted.minor,
        wanted.variant,
    ):
        raise CaseError("resolve", "venv_failed", f"uv chose {used} for the minor of {key}")
    return Interpreter(requested=key, used=used, executable=executable, build=build, machine=machine)


__all__ = [
    "RESOLVE_TIMEOUT_S",
    "VENV_TIMEOUT_S",
    "Interpreter",
    "InterpreterKey",
    "create_venv",
    "describe_interpreter",
    "discovery_path",
    "minor_request",
    "parse_interpreter_key",
    "pyenv_interpreter_dirs",
    "resolve_program",
    "uv_version",
]
