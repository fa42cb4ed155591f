"""Steps 3, 4 and 7: the case's install commands, its pinned installs checked in place, a
template's bytecode, the freeze.

Why it is strict: an unpinned install resolves silently to another SDK.  So after every pinned
install the case's own interpreter is asked which version it has (``importlib.metadata``), and the
pin is compared as a string.  Step 2, the interpreter and its venv, is ``interpreter.py``.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench._util.clock import UTC_FORMAT
from pytest_obelize_bench._util.digests import sha256_text
from pytest_obelize_bench.case.interpreter import (
    RESOLVE_TIMEOUT_S,
    VENV_TIMEOUT_S,
    Interpreter,
    InterpreterKey,
    create_venv,
    describe_interpreter,
    discovery_path,
    minor_request,
    parse_interpreter_key,
    pyenv_interpreter_dirs,
    resolve_program,
    uv_version,
)
from pytest_obelize_bench.isolation.elide import Elider
from pytest_obelize_bench.isolation.executor import OUTPUT_CAP_BYTES
from pytest_obelize_bench.isolation.policy import (
    ASK_INTERPRETER_S,
    DEFAULT_LIMITS,
    FREEZE_S,
    PYTHON_NAMES,
    Step,
    uv_binary,
)
from pytest_obelize_bench.isolation.steps import StepRunner

INSTALL_TIMEOUT_S = DEFAULT_LIMITS["install"]
CHECK_TIMEOUT_S = ASK_INTERPRETER_S

_DISTRIBUTION = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?")
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+!_-]*")
#: The protocol's version check, run in the case's own interpreter (``sandbox_cost.py`` times it too).
VERSION_PROGRAM = "import sys\nfrom importlib.metadata import version\nprint(version(sys.argv[1]))\n"


def case_environment(env: Mapping[str, str], venv: Path) -> dict[str, str]:
    """``env`` with the case venv active: VIRTUAL_ENV set and its ``bin`` first on PATH.

    Install commands and suites run under this, so ``uv pip install x`` targets the case venv and
    ``pip`` or ``pytest`` are the venv's own.
    """
    bin_dir = os.fspath(Path(venv) / "bin")
    path = env.get("PATH")
    return {
        **env,
        "VIRTUAL_ENV": os.fspath(venv),
        "PATH": bin_dir if not path else bin_dir + os.pathsep + path,
    }


def run_install_commands(
    runner: StepRunner,
    commands: Sequence[str],
    *,
    interpreter: Path,
    checkout: Path,
    timeout: float = INSTALL_TIMEOUT_S,
    constraints: Path | None = None,
    outputs: list[str] | None = None,
) -> None:
    """Step 3: the case's reviewed install commands, each a step ``install``, run in the checkout.

    They come from the repository's own manifest (``-r requirements.txt``, ``-e ".[dev]"``,
    ``.``), so their relative paths name files of the checkout.

    Each string is split as a POSIX shell would split words (no shell runs it).  A leading
    ``python``/``python3`` becomes the case interpreter and a leading ``uv`` this package's uv.
    The runner's env must be the case environment (``case_environment``): VIRTUAL_ENV of the case
    venv, so ``uv pip install x`` installs into it, and its ``bin`` first on PATH.

    With ``constraints`` (``envreuse.py``) each ``uv pip install`` first runs offline held to the
    versions in that file; ``outputs`` gets what each online ``uv pip install`` printed.
    """
    for index, command in enumerate(commands, start=1):
        try:
            argv = shlex.split(command)
        except ValueError as error:
            raise CaseError("install", "install_failed", f"install command {index} cannot be split: {error}") from None
        if not argv:
            raise CaseError("install", "install_failed", f"install command {index} is empty")
        if argv[0] in PYTHON_NAMES:
            argv[0] = os.fspath(interpreter)
        elif argv[0] == "uv":
            argv[0] = uv_binary()
        uv_install = argv[1:3] == ["pip", "install"] and argv[0] == uv_binary()
        # Environment reuse (envreuse.py): commands whose content key was resolved before run
        # offline, held to that resolution's versions, and online only if that fails.
        if constraints is not None and uv_install:
            quick = [*argv[:3], "--offline", "--constraint", os.fspath(constraints), *argv[3:]]
            if runner.run(Step.INSTALL, "install", quick, timeout=timeout, cwd=checkout).exit_code == 0:
                continue
        done = runner.run(Step.INSTALL, "install", argv, timeout=timeout, reason="install_failed", cwd=checkout)
        if outputs is not None and uv_install:
            outputs.append(done.output(OUTPUT_CAP_BYTES))


def check_installed_version(
    runner: StepRunner,
    *,
    number: int,
    name: str,
    distribution: str,
    version: str,
    interpreter: Path,
) -> str:
    """Ask the case interpreter (importlib.metadata) which ``distribution`` it has; must be exact.

    ``2.24.0.post1`` is not ``2.24.0``, and ``1.16.0`` is not ``1.16``: the pin is compared as a
    string.  No answer is a mismatch too.  Returns the observed version.
    """
    asked = runner.run(
        number,
        name,
        [os.fspath(interpreter), "-I", "-c", VERSION_PROGRAM, distribution],
        timeout=CHECK_TIMEOUT_S,
    )
    lines = [line.strip() for line in asked.output().splitlines() if line.strip()]
    if asked.exit_code != 0 or not lines:
        raise CaseError(
            name,
            "version_mismatch",
            f"{distribution}: the case interpreter could not say which version it has",
        )
    observed = lines[-1]
    if observed != version:
        raise CaseError(name, "version_mismatch", f"{distribution}: pinned {version}, installed {observed}")
    return observed


#: The step variable that says how uv places a package's files in a case venv.
LINK_MODE_VARIABLE = "UV_LINK_MODE"
#: Without a sandbox nothing stops a suite writing through a link into the shared uv cache, and
#: so into every later case and round: there, every uv install of a step copies (uv reads the
#: variable; the harness's own installs pass it as their flag).
UNSANDBOXED_LINKS: Mapping[str, str] = {LINK_MODE_VARIABLE: "copy"}


def link_mode(env: Mapping[str, str]) -> str:
    """How the harness's installs place the SDK's files: links into the uv cache, or copies (no sandbox)."""
    return env.get(LINK_MODE_VARIABLE, "symlink")


def install_pinned(
    runner: StepRunner,
    *,
    number: int,
    name: str,
    distribution: str,
    version: str,
    interpreter: Path,
    timeout: float = INSTALL_TIMEOUT_S,
    constraints: Path | None = None,
    outputs: list[str] | None = None,
) -> str:
    """Steps 4 and 7: install ``distribution==version`` into the case venv and check it there.

    Step ``<name>`` runs ``uv pip install`` (``install_failed``), step ``<name>-check`` asks the
    case interpreter (``version_mismatch``).  ``--no-config`` keeps a repository's own uv settings
    (an index URL in its pyproject) away from the harness's pins.  Returns the observed version.
    ``constraints`` and ``outputs`` are as for ``run_install_commands``.
    """
    if not _DISTRIBUTION.fullmatch(distribution):
        raise ValueError(f"{distribution!r} is not a distribution name")
    if not _VERSION.fullmatch(version):
        raise ValueError(f"{version!r} is not a single exact version")
    # --link-mode=symlink: the sandbox binds the uv cache and the checkout as separate mounts, across
    # which a hard link fails and uv copies every file (about 7 s for the legacy SDK's 180 MB);
    # symlinks into the cache, read-only to every step but the installs, cost what hard links do.
    # Without a sandbox the step environment says copy (UNSANDBOXED_LINKS): the cache stays the cache's.
    argv = [
        uv_binary(),
        "pip",
        "install",
        "--no-config",
        f"--link-mode={link_mode(runner.env)}",
        "--python",
        os.fspath(interpreter),
        f"{distribution}=={version}",
    ]
    # Environment reuse (envreuse.py): an environment resolved before installs offline, held to
    # the versions that resolution chose; should that fail, the install runs online as without reuse.
    went_offline = (
        constraints is not None
        and runner.run(
            number, name, [*argv[:5], "--offline", "--constraint", os.fspath(constraints), *argv[5:]], timeout=timeout
        ).exit_code
        == 0
    )
    if not went_offline:
        done = runner.run(number, name, argv, timeout=timeout, reason="install_failed")
        if outputs is not None:
            outputs.append(done.output(OUTPUT_CAP_BYTES))
    return check_installed_version(
        runner,
        number=number,
        name=f"{name}-check",
        distribution=distribution,
        version=version,
        interpreter=interpreter,
    )


#: Step ``bytecode``'s program: every module of the venv's site-packages compiled where it sits,
#: symlinked ones (an SDK's files, links into the uv cache) read through their link.  It exits 0
#: whatever it met: a file that does not compile (Python 2 code a package ships as data) is named
#: in the log and left as it was, as an import would leave it.
_BYTECODE_PROGRAM = (
    "import compileall, sysconfig\n"
    "for folder in sorted({sysconfig.get_path('purelib'), sysconfig.get_path('platlib')}):\n"
    "    compileall.compile_dir(folder, quiet=1)\n"
)


def compile_bytecode(runner: StepRunner, *, number: int, interpreter: Path, timeout: float) -> None:
    """Step ``bytecode``: the venv's packages compiled, before it is kept as a template.

    Why: every step runs with ``PYTHONDONTWRITEBYTECODE``, so a suite that imports the legacy SDK
    compiled it from source on every run (about 1.1 s of processor against 0.45 s from bytecode);
    a template is built once and imported by every suite of every case of its key.  Never the
    case's error: a step that fails or runs out of time leaves modules uncompiled, not wrong.
    """
    runner.run(number, "bytecode", [os.fspath(interpreter), "-I", "-c", _BYTECODE_PROGRAM], timeout=timeout)


#: Step ``bytecode`` of a copy layer: each source listed in ``argv[2]`` (one path a line) compiled
#: into ``argv[1]``, a folder the harness made empty just before, at the source's own path below it,
#: never beside the source, where a cache the case's baseline could have planted would be taken for
#: this one.  A link is read through, as ``import`` reads it (under the sandbox an SDK's files are
#: links into the uv cache), inside whatever isolation the case's steps have.  Run with ``-I -S -B``:
#: no ``.pth`` file the install wrote runs, and nothing else is cached.
_SOURCES_PROGRAM = (
    "import importlib.util, os, py_compile, sys\n"
    "prefix = sys.argv[1]\n"
    "with open(sys.argv[2], encoding='utf-8') as listed:\n"
    "    names = listed.read().split('\\n')\n"
    "for name in filter(None, names):\n"
    "    try:\n"
    "        cached = os.path.basename(importlib.util.cache_from_source(name))\n"
    "        target = os.path.join(prefix, os.path.dirname(name).lstrip(os.sep), cached)\n"
    "        if os.path.isfile(name):\n"
    "            py_compile.compile(name, cfile=target, doraise=True)\n"
    "    except (OSError, SyntaxError, ValueError, py_compile.PyCompileError) as exc:\n"
    "        print(f'not compiled: {name}: {type(exc).__name__}')\n"
)


def listable(path: str) -> bool:
    """Whether ``compile_sources`` can list ``path`` on one line of its UTF-8 listing: a name with a
    line break, or bytes that are not UTF-8 (an install can write either), is left uncompiled
    rather than misread."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\n" not in path


def compile_sources(
    runner: StepRunner, *, number: int, interpreter: Path, listing: Path, prefix: Path, timeout: float
) -> None:
    """Step ``bytecode`` for the copy view's layer of the new SDK: the sources an install wrote,
    whose paths ``listing`` holds, compiled into ``prefix`` (``copy_layer.compiled_into``).

    Why: a copy layer is compared with its template leaving caches out, so caches found in the
    copy cannot be kept; compiled here, afresh, later cases' suites import the new SDK from
    bytecode (1.1 s against 0.6 s for ``google.genai``).  Never the case's error.
    """
    argv = [os.fspath(interpreter), "-I", "-S", "-B", "-c", _SOURCES_PROGRAM, os.fspath(prefix), os.fspath(listing)]
    runner.run(number, "bytecode", argv, timeout=timeout)


def packages_digest(runner: StepRunner, *, interpreter: Path, checkout: Path) -> str:
    """Step 7 ``freeze``: sha256 of ``uv pip freeze`` with the checkout's path shown as ``<case>``.

    The listing itself is the step's log.  ``-q`` keeps uv's own remarks (which go to the same
    merged output) out of what is hashed.
    """
    listed = runner.run(
        Step.INSTALL_TO,
        "freeze",
        [uv_binary(), "pip", "freeze", "-q", "--no-config", "--python", os.fspath(interpreter)],
        timeout=FREEZE_S,
        reason="install_failed",
    )
    text = Elider([("<case>", checkout)]).text(listed.output(OUTPUT_CAP_BYTES + 4096))
    return sha256_text(text)


def exclude_newer_now() -> str:
    """Now in UTC as ``YYYY-MM-DDTHH:MM:SSZ``: the cutoff every install of a round resolves at."""
    return datetime.now(UTC).strftime(UTC_FORMAT)


def validate_exclude_newer(text: str) -> str:
    """A ``--exclude-newer`` value as ``YYYY-MM-DDTHH:MM:SSZ``, or a ValueError saying why.

    Accepts that form, any ISO 8601 time with an offset (converted to UTC) and a bare date
    (midnight UTC).  A time without an offset is refused: it would mean a different cutoff on
    every machine.
    """
    raw = text.strip() if isinstance(text, str) else ""
    problem = f"--exclude-newer {text!r} is not a UTC time: give one like 2025-06-01T00:00:00Z (or a date, 2025-06-01)"
    if not raw:
        raise ValueError(problem)
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", raw):
            moment = datetime.strptime(raw, "%Y-%m-%d").replace(tzinfo=UTC)
        else:
            moment = datetime.fromisoformat(raw.replace("z", "Z"))
    except ValueError:
        raise ValueError(problem) from None
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(problem)
    return moment.astimezone(UTC).strftime(UTC_FORMAT)


def default_uv_cache(work_root: Path, environ: Mapping[str, str] = os.environ) -> Path:
    """UV_CACHE_DIR of the harness if set, else ``<work root>/uv-cache``.

    Shared by workers and rounds (uv locks it), never under a case's HOME, which a rerun empties.
    """
    configured = environ.get("UV_CACHE_DIR")
    return Path(configured) if configured else Path(work_root) / "uv-cache"


__all__ = [
    "CHECK_TIMEOUT_S",
    "INSTALL_TIMEOUT_S",
    "RESOLVE_TIMEOUT_S",
    "VENV_TIMEOUT_S",
    "Interpreter",
    "InterpreterKey",
    "case_environment",
    "check_installed_version",
    "compile_bytecode",
    "compile_sources",
    "create_venv",
    "default_uv_cache",
    "describe_interpreter",
    "discovery_path",
    "exclude_newer_now",
    "install_pinned",
    "listable",
    "minor_request",
    "packages_digest",
    "parse_interpreter_key",
    "pyenv_interpreter_dirs",
    "resolve_program",
    "run_install_commands",
    "uv_version",
    "validate_exclude_newer",
]
