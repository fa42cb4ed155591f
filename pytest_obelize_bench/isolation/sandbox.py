"""Every step that runs a repository's code runs under bubblewrap (``bwrap``).

Why: a suite, an install command or a build backend is untrusted code running as the harness's
user.  Without a sandbox it can read the harness's secrets through ``/proc/<parent>/environ``, the
real HOME's keys and tokens, rewrite the harness, the installed obelize and earlier records, leave
daemons behind and reach the network when its case says it needs none.  bwrap needs no daemon and
no image: each step gets a read-only view of the system in which only its own case is writable.

What a step sees (``bwrap_argv`` builds it from a ``Policy``):

* the system read-only (``--ro-bind / /``), a fresh ``/dev``, ``/proc`` of its own PID namespace
  and an empty ``/tmp``;
* no capabilities, even when the harness runs as root (``--cap-drop ALL``);
* the real HOME, the harness's tree, ``results/``, the work root (other cases' folders),
  ``/run`` and ``/etc/ssh`` hidden under empty read-only tmpfs, ``/etc/shadow`` unreadable, with
  only what a step must run re-exposed read-only: the interpreters (harness venv, case venv's
  base, tool venv), the harness package, the uv binary, the resolver configuration;
* writable: the case's checkout (its venv inside), its TMPDIR and HOME; the uv and pip caches
  for install steps (and ``uv pip freeze``) only, read-only otherwise; the junit folder for the
  suite steps only;
* new PID, IPC and UTS namespaces, ``--die-with-parent`` and ``--new-session``: when the step's
  command exits, its PID namespace ends and every process it left, ``setsid`` daemons too, with it;
* no network (``--unshare-net``, loopback only) except for install steps and for the suites of a
  case with ``tests_require_network: true``; the fixtures pass has no network at any step;
* bwrap itself is launched with the step's allow-listed environment (``/proc/1/environ`` inside
  is bwrap's), and ``--clearenv`` plus ``--setenv`` repeat it for the command.

Fetch and venv creation run outside: they run git and uv on the harness's behalf, not repository
code.  Any other step name runs inside with the strictest policy, so a new step fails closed.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from pytest_obelize_bench.isolation.executor import Completed, Executor, run_program
from pytest_obelize_bench.isolation.policy import BASE_ENVIRONMENT, PACKAGE_CACHES, inherited

SandboxMode = Literal["auto", "bwrap", "none"]
SANDBOX_MODES: tuple[str, ...] = ("auto", "bwrap", "none")
#: Steps that run the harness's own git and uv, before any repository code exists in a venv.
OUTSIDE_STEPS = frozenset({"fetch", "venv"})
#: Steps that download: they keep the network and may write the package caches.
INSTALL_STEPS = frozenset({"install", "install-from", "install-to"})
#: Steps that may write the package caches: the installs, and ``uv pip freeze``, which keeps a
#: temporary folder in uv's cache even to list a venv.
CACHE_WRITERS = INSTALL_STEPS | {"freeze"}
#: The two test phases: the only steps that may write the junit folder.
SUITE_STEPS = frozenset({"baseline", "after"})
#: Seconds each probe command may take.
PROBE_TIMEOUT_S = 30.0
#: Size cap of a step's private ``/tmp`` (memory-backed); TMPDIR points to disk anyway.
SCRATCH_TMP_BYTES = 1024 * 1024 * 1024
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"
#: System folders hidden from every step: sockets of local services, the host's SSH keys.
SYSTEM_HIDDEN: tuple[str, ...] = ("/run", "/etc/ssh")
#: System files covered by ``/dev/null`` (unreadable: binds are ``nodev``), because a harness run
#: as root would otherwise read them as their owner.
SYSTEM_MASKED: tuple[str, ...] = ("/etc/shadow", "/etc/gshadow")

_LOG_NAME = re.compile(r"\d+-(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\.log")
_VERSION = re.compile(r"bubblewrap\s+(?P<version>\S+)")


class SandboxUnavailable(Exception):
    """``--bench-sandbox=bwrap`` was asked for and bwrap cannot run here; the message says why."""


# -- the probe, once per session on the controller -----------------------------------------


@dataclass(frozen=True)
class Probe:
    """What ``bwrap --version`` and a trivial sandboxed ``true`` said on this machine."""

    program: str | None
    version: str | None
    problem: str | None

    @property
    def works(self) -> bool:
        return self.problem is None and self.program is not None and self.version is not None


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else "(no output)"


def namespace_flags(*, network: bool) -> list[str]:
    """The flags every sandboxed step gets, plus ``--unshare-net`` without network."""
    # --cap-drop ALL: bwrap run by root otherwise leaves the step every capability, and one of
    # them (CAP_SYS_ADMIN) is enough to remount the read-only binds writable.
    flags = [
        "--cap-drop",
        "ALL",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--die-with-parent",
        "--new-session",
    ]
    if not network:
        flags.append("--unshare-net")
    return flags


def probe_bwrap(program: str | None = None, *, timeout: float = PROBE_TIMEOUT_S) -> Probe:
    """Whether bwrap runs here: its version, then ``true`` under the flags and mounts steps use.

    The second command is what fails on a machine whose kernel forbids unprivileged user
    namespaces or whose container forbids mounts, so a usable ``--version`` alone proves nothing.
    """
    path = program or shutil.which("bwrap")
    if path is None:
        return Probe(None, None, f"bwrap is not on PATH; {INSTALL_HINT}")
    env = {"PATH": os.defpath, **inherited(BASE_ENVIRONMENT)}
    true = shutil.which("true") or "/bin/true"
    try:
        asked = run_program([path, "--version"], env=env, timeout=timeout)
    except OSError as error:
        return Probe(path, None, f"{path} --version could not run: {error}")
    if asked.timed_out or asked.launch_error is not None:
        return Probe(path, None, f"{path} --version could not run: {asked.launch_error or 'timed out'}")
    match = _VERSION.search(asked.output)
    if asked.exit_code != 0 or match is None:
        return Probe(path, None, f"{path} --version said {_last_line(asked.output)!r}, not a bubblewrap version")
    try:
        with tempfile.TemporaryDirectory(prefix="obelize-bench-probe-") as scratch:
            # Every kind of mount and option a step uses, so an older bwrap fails here, not per step.
            (Path(scratch) / "hidden").mkdir()
            (Path(scratch) / "kept").mkdir()
            policy = Policy(writable=(Path(scratch) / "kept",), hidden=(Path(scratch) / "hidden",))
            argv = bwrap_argv(path, policy, [true], cwd=Path(scratch) / "kept", env=env)
            tried = run_program(argv, env=env, timeout=timeout)
    except OSError as error:
        return Probe(path, match["version"], f"a sandboxed true could not run: {error}")
    if tried.timed_out or tried.launch_error is not None:
        return Probe(path, match["version"], f"a sandboxed true could not run: {tried.launch_error or 'timed out'}")
    if tried.exit_code != 0:
        said = _last_line(tried.output)
        hint = ""
        if any(word in said for word in ("namespace", "uid map", "Operation not permitted", "Permission denied")):
            hint = (
                " (user namespaces may be disabled: see sysctl kernel.unprivileged_userns_clone"
                " and user.max_user_namespaces)"
            )
        return Probe(path, match["version"], f"bwrap cannot create a sandbox here: {said}{hint}")
    return Probe(path, match["version"], None)


@dataclass(frozen=True)
class Settings:
    """The session's choice, handed to workers in the round context (JSON-safe)."""

    mode: SandboxMode
    program: str | None = None
    version: str | None = None
    warning: str | None = None

    @property
    def enabled(self) -> bool:
        return self.program is not None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Settings:
        """The settings in a context; an empty mapping (a context without them) is ``none``."""
        if not data:
            return cls(mode="none")
        mode = data.get("mode", "none")
        if mode not in SANDBOX_MODES:
            raise ValueError(f"sandbox mode {mode!r} is not one of {', '.join(SANDBOX_MODES)}")
        return cls(mode=mode, program=data.get("program"), version=data.get("version"), warning=data.get("warning"))


def choose(mode: str, probe: Callable[[], Probe] = probe_bwrap) -> Settings:
    """``none``: off.  ``bwrap``: on, or ``SandboxUnavailable``.  ``auto``: on when it works, else a warning."""
    if mode not in SANDBOX_MODES:
        raise SandboxUnavailable(f"unknown sandbox mode {mode!r}; give one of {', '.join(SANDBOX_MODES)}")
    if mode == "none":
        return Settings(mode="none")
    found = probe()
    if found.works:
        return Settings(mode=mode, program=found.program, version=found.version)  # type: ignore[arg-type]
    problem = found.problem or "bwrap did not answer"
    if mode == "bwrap":
        raise SandboxUnavailable(problem)
    return Settings(
        mode="auto",
        warning=f"no sandbox: {problem}; every step ran unsandboxed (see docs/how-to/sandbox.md)",
    )


def provenance_label(settings: Settings, *, suites_network: bool, offline: bool) -> str:
    """The record's ``sandbox`` field: ``bwrap <version> (...)`` with the suites' network, or ``none``."""
    if not settings.enabled:
        return "none"
    if offline:
        policy = "no network at any step"
    elif suites_network:
        policy = "suites with network"
    else:
        policy = "suites without network"
    return f"bwrap {settings.version} ({policy})"


# -- one step's policy and its argv ----------------------------------------------------------


@dataclass(frozen=True)
class Policy:
    """The mounts and namespaces of one sandboxed step (absolute, resolved paths)."""

    writable: tuple[Path, ...] = ()
    read_only: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    masked: tuple[Path, ...] = ()
    network: bool = False
    scratch_bytes: int = SCRATCH_TMP_BYTES


def _depth(path: Path) -> tuple[int, str]:
    return len(path.parts), os.fspath(path)


def _unique(paths: Iterable[Path]) -> list[Path]:
    seen: list[Path] = []
    for path in paths:
        if path not in seen:
            seen.append(path)
    return sorted(seen, key=_depth)


def _outermost(paths: Iterable[Path]) -> list[Path]:
    """``paths`` without those inside another of them, parents first."""
    kept: list[Path] = []
    for path in _unique(paths):
        if not _under(path, kept):
            kept.append(path)
    return kept


def _under(path: Path, roots: Iterable[Path]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def bwrap_argv(
    program: str,
    policy: Policy,
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    exists: Callable[[Path], bool] = os.path.lexists,
    is_dir: Callable[[Path], bool] = os.path.isdir,
) -> list[str]:
    """The bwrap command that runs ``argv`` in ``cwd`` with ``env`` under ``policy``.

    Mount order is what makes it right: the read-only root, then the empty tmpfs over each hidden
    folder (parents first), then the read-only exposures inside them, then the writable binds,
    and last the hidden tmpfs remounted read-only (bwrap needs them writable while it creates the
    mount points of what is bound inside).  Paths that do not exist are left out; ``/`` is never
    hidden.  A read-only exposure outside every hidden folder is already visible and left out.
    """
    root = Path("/")
    scratch = Path("/tmp")
    hidden = _outermost(p for p in policy.hidden if p != root and p != scratch and is_dir(p))
    covered = [scratch, *hidden]

    def reveals(path: Path) -> bool:  # binding it would uncover a hidden folder
        return any(_under(each, [path]) for each in hidden)

    writable = [p for p in _unique(policy.writable) if exists(p) and not reveals(p)]
    read_only = _outermost(
        p for p in policy.read_only if exists(p) and _under(p, covered) and not _under(p, writable) and not reveals(p)
    )
    args = [program, *namespace_flags(network=policy.network)]
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    args += ["--size", str(policy.scratch_bytes), "--tmpfs", "/tmp"]
    for path in hidden:
        args += ["--tmpfs", os.fspath(path)]
    for path in read_only:
        args += ["--ro-bind", os.fspath(path), os.fspath(path)]
    for path in _unique(policy.masked):
        if exists(path) and not is_dir(path) and not _under(path, covered):
            args += ["--ro-bind", os.devnull, os.fspath(path)]
    for path in writable:
        args += ["--bind", os.fspath(path), os.fspath(path)]
    for path in hidden:
        args += ["--remount-ro", os.fspath(path)]
    args += ["--chdir", os.fspath(cwd), "--clearenv"]
    for name in sorted(env):
        args += ["--setenv", name, env[name]]
    args += ["--", *[os.fspath(arg) for arg in argv]]
    return args


def step_name_of(log: Path) -> str:
    """The step name in a log file name ``NN-<name>.log`` (``StepRunner.next_log``'s form).

    A name that does not parse is ``""``, which no policy treats as outside or as an install.
    """
    match = _LOG_NAME.fullmatch(Path(log).name)
    return match["name"] if match else ""


def _real(path: str | os.PathLike[str]) -> Path:
    return Path(os.path.realpath(os.fspath(path)))


def interpreter_roots(python: Path) -> list[Path]:
    """What running ``python`` needs visible: its venv (or prefix) and its base installation.

    A venv's ``bin/python`` is a symlink to the base interpreter; both prefixes are the parents of
    their ``bin`` folders.  Only a real file under a ``bin`` folder counts, so a planted symlink
    cannot make an arbitrary folder visible.
    """
    roots: list[Path] = []
    for candidate in (Path(os.path.abspath(python)), _real(python)):
        if candidate.parent.name == "bin":
            roots.append(candidate.parent.parent)
    real = _real(python)
    if not real.is_file():
        return []
    return _unique(roots)


@dataclass(frozen=True)
class CaseLayout:
    """Where one case's steps may write, what they may read, and what they must not see."""

    checkout: Path
    home: Path
    tmp: Path
    junit: Path
    caches: tuple[Path, ...] = ()
    read_only: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    masked: tuple[Path, ...] = ()
    suites_network: bool = False
    offline: bool = False

    @property
    def venv(self) -> Path:
        return self.checkout / ".venv"


def policy_for(layout: CaseLayout, name: str, extra_read_only: Sequence[Path] = ()) -> Policy | None:
    """The policy of step ``name``, or None for a step that runs outside (fetch, venv)."""
    if name in OUTSIDE_STEPS:
        return None
    install = name in INSTALL_STEPS
    suite = name in SUITE_STEPS
    network = not layout.offline and (install or (suite and layout.suites_network))
    # The venv lives inside the checkout: binding it again would follow a symlink a step planted.
    writable = [layout.checkout, layout.home, layout.tmp]
    read_only = [*layout.read_only, *extra_read_only]
    if name in CACHE_WRITERS:
        writable += layout.caches
    else:
        read_only += layout.caches
    if suite:
        writable.append(layout.junit)
    return Policy(
        writable=tuple(writable),
        read_only=tuple(read_only),
        hidden=layout.hidden,
        masked=layout.masked,
        network=network,
    )


class SandboxExecutor:
    """Wraps an executor: each step's argv runs under bwrap with the policy its name calls for.

    TMPDIR becomes the case's own for a sandboxed step (the harness's /tmp is not visible).  The
    case interpreter's base installation is made visible from the first sandboxed step after the
    venv exists (no repository code has run in it yet) and kept for the rest of the case.
    """

    def __init__(self, inner: Executor, *, program: str, layout: CaseLayout) -> None:
        self.inner = inner
        self.program = program
        self.layout = layout
        self._case_roots: tuple[Path, ...] | None = None

    def _interpreter(self) -> tuple[Path, ...]:
        if self._case_roots is None:
            python = self.layout.venv / "bin" / "python"
            if not os.path.lexists(python):
                return ()
            self._case_roots = tuple(interpreter_roots(python))
        return self._case_roots

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        timeout: float,
        log: Path,
    ) -> Completed:
        """Run ``argv`` inside the sandbox (or outside, for fetch and venv)."""
        policy = policy_for(self.layout, step_name_of(log), self._interpreter())
        if policy is None:
            return self.inner.run(argv, cwd=cwd, env=env, timeout=timeout, log=log)
        inside = {**env, "TMPDIR": os.fspath(self.layout.tmp)}
        for path in (self.layout.tmp, self.layout.home, *(p for p in self.layout.caches if p in policy.writable)):
            path.mkdir(parents=True, exist_ok=True)
        wrapped = bwrap_argv(self.program, policy, argv, cwd=Path(cwd), env=inside)
        return self.inner.run(wrapped, cwd=cwd, env=inside, timeout=timeout, log=log)


# -- a case's layout, from what the harness knows --------------------------------------------


@dataclass(frozen=True)
class HarnessPaths:
    """The machine's paths a case must not see or must still reach (read on the worker)."""

    real_home: Path | None
    project_root: Path
    results: Path
    work_root: Path
    package: Path
    interpreters: tuple[Path, ...] = ()
    programs: tuple[Path, ...] = ()
    extra: tuple[Path, ...] = field(default_factory=tuple)


def harness_paths(
    *,
    project_root: str,
    results: str,
    work_root: str,
    tool: Mapping[str, Any] | None,
    environ: Mapping[str, str] = os.environ,
) -> HarnessPaths:
    """The harness's own locations: what is hidden, and what must stay reachable read-only."""
    from pytest_obelize_bench.isolation.policy import uv_binary

    home = environ.get("HOME")
    interpreters = [
        Path(sys.prefix),
        Path(sys.base_prefix),
        Path(sys.exec_prefix),
        *interpreter_roots(Path(sys.executable)),
    ]
    extra: list[Path] = []
    if tool:
        python = tool.get("python")
        if isinstance(python, str) and python:
            interpreters += interpreter_roots(Path(python))
        spec = tool.get("spec")
        if tool.get("source") == "checkout" and isinstance(spec, str):
            extra.append(_real(Path(spec).expanduser()))
    installs = environ.get("UV_PYTHON_INSTALL_DIR")
    if installs:
        interpreters.append(_real(installs))
    resolver = _real("/etc/resolv.conf")
    if resolver != Path("/etc/resolv.conf"):
        extra.append(resolver)
    return HarnessPaths(
        real_home=_real(home) if home else None,
        project_root=_real(project_root),
        results=_real(results),
        work_root=_real(work_root),
        package=_real(Path(__file__).parent.parent),
        interpreters=tuple(_unique(_real(p) for p in interpreters)),
        programs=(_real(uv_binary()),),
        extra=tuple(extra),
    )


def case_layout(
    paths: HarnessPaths,
    *,
    checkout: Path,
    home: Path,
    tmp: Path,
    junit: Path,
    env: Mapping[str, str],
    uv_cache: str | None,
    suites_network: bool,
    offline: bool,
) -> CaseLayout:
    """One case's layout: its own folders writable, the harness's hidden, interpreters reachable."""
    caches = [Path(env[name]) for name in PACKAGE_CACHES if env.get(name)]
    if uv_cache and not env.get("UV_CACHE_DIR"):
        caches.append(Path(uv_cache))
    hidden = [paths.project_root, paths.results, paths.work_root, *(Path(p) for p in SYSTEM_HIDDEN)]
    if paths.real_home is not None:
        hidden.append(paths.real_home)
    return CaseLayout(
        checkout=_real(checkout),
        home=_real(home),
        tmp=_real(tmp),
        junit=_real(junit),
        caches=tuple(_real(p) for p in caches),
        read_only=(*paths.interpreters, paths.package, *paths.programs, *paths.extra),
        hidden=tuple(hidden),
        masked=tuple(Path(p) for p in SYSTEM_MASKED),
        suites_network=suites_network,
        offline=offline,
    )


__all__ = [
    "CACHE_WRITERS",
    "INSTALL_STEPS",
    "OUTSIDE_STEPS",
    "SANDBOX_MODES",
    "SUITE_STEPS",
    "CaseLayout",
    "HarnessPaths",
    "Policy",
    "Probe",
    "SandboxExecutor",
    "SandboxUnavailable",
    "Settings",
    "bwrap_argv",
    "case_layout",
    "choose",
    "harness_paths",
    "interpreter_roots",
    "namespace_flags",
    "policy_for",
    "probe_bwrap",
    "provenance_label",
    "step_name_of",
]
