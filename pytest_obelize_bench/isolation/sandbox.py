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
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from pytest_obelize_bench.isolation.bwrap import (
    SCRATCH_TMP_BYTES,
    Policy,
    bwrap_argv,
    namespace_flags,
    unique_by_depth,
)
from pytest_obelize_bench.isolation.executor import Completed, Executor
from pytest_obelize_bench.isolation.policy import PACKAGE_CACHES, uv_binary
from pytest_obelize_bench.isolation.sandbox_probe import (
    INSTALL_HINT,
    PROBE_TIMEOUT_S,
    SANDBOX_MODES,
    Probe,
    SandboxMode,
    SandboxUnavailable,
    Settings,
    choose,
    probe_bwrap,
    provenance_label,
)

#: Steps that run the harness's own git and uv, before any repository code exists in a venv.
OUTSIDE_STEPS = frozenset({"fetch", "venv"})
#: Steps that download: they keep the network and may write the package caches.
INSTALL_STEPS = frozenset({"install", "install-from", "install-to"})
#: Steps that may write the package caches: the installs, and ``uv pip freeze``, which keeps a
#: temporary folder in uv's cache even to list a venv.
CACHE_WRITERS = INSTALL_STEPS | {"freeze"}
#: The two test phases: the only steps that may write the junit folder.
SUITE_STEPS = frozenset({"baseline", "after"})
#: System folders hidden from every step: sockets of local services, the host's SSH keys.
SYSTEM_HIDDEN: tuple[str, ...] = ("/run", "/etc/ssh")
#: System files covered by ``/dev/null`` (unreadable: binds are ``nodev``), because a harness run
#: as root would otherwise read them as their owner.
SYSTEM_MASKED: tuple[str, ...] = ("/etc/shadow", "/etc/gshadow")


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
    return unique_by_depth(roots)


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
    #: the read-only layers under the case's venv, lowest first: a template venv (``templates.py``)
    #: and what was installed over it; empty when the case's venv is its own folder.
    venv_layers: tuple[Path, ...] = ()

    @property
    def venv(self) -> Path:
        return self.checkout / ".venv"

    @property
    def venv_upper(self) -> Path:
        """Where the case's own writes to an overlaid venv go: ``<case>.venv-upper`` beside its
        checkout (as ``<case>.logs``), never in it, and never shared with another case."""
        return self.checkout.parent / f"{self.checkout.name}.venv-upper"

    @property
    def venv_work(self) -> Path:
        return self.checkout.parent / f"{self.checkout.name}.venv-work"

    def overlays(self) -> tuple[tuple[tuple[Path, ...], Path, Path, Path], ...]:
        if not self.venv_layers:
            return ()
        return ((self.venv_layers, self.venv_upper, self.venv_work, self.venv),)


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
        overlays=layout.overlays(),
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

    def mount_template(self, *layers: Path) -> None:
        """From now on every sandboxed step sees the case's venv as an overlay of ``layers`` (lowest first)."""
        self.layout = replace(self.layout, venv_layers=tuple(_real(layer) for layer in layers))
        for folder in (self.layout.venv_upper, self.layout.venv_work, self.layout.venv):
            folder.mkdir(parents=True, exist_ok=True)
        self._case_roots = None

    def expose(self, *folders: Path) -> None:
        """From now on every sandboxed step may read ``folders`` (by their real paths), never write
        them: a copy view's template, whose bytecode the copy links to (``templates.copy_view``)."""
        shown = tuple(_real(folder) for folder in folders)
        self.layout = replace(self.layout, read_only=(*self.layout.read_only, *shown))

    def _interpreter(self) -> tuple[Path, ...]:
        if self._case_roots is None:
            python = self.layout.venv / "bin" / "python"
            if self.layout.venv_layers:  # the merged venv exists only inside the sandbox
                python = self.layout.venv_layers[0] / "bin" / "python"
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
        step: str = "",
    ) -> Completed:
        """Run step ``step``'s ``argv`` inside the sandbox (or outside, for fetch and venv).

        The step's name decides its policy; a caller that names none gets the strictest one.
        """
        policy = policy_for(self.layout, step, self._interpreter())
        if policy is None:
            return self.inner.run(argv, cwd=cwd, env=env, timeout=timeout, log=log, step=step)
        inside = {**env, "TMPDIR": os.fspath(self.layout.tmp)}
        for path in (self.layout.tmp, self.layout.home, *(p for p in self.layout.caches if p in policy.writable)):
            path.mkdir(parents=True, exist_ok=True)
        wrapped = bwrap_argv(self.program, policy, argv, cwd=Path(cwd), env=inside)
        return self.inner.run(wrapped, cwd=cwd, env=inside, timeout=timeout, log=log, step=step)


# -- a case's layout, from what the harness knows --------------------------------------------


@dataclass(frozen=True)
class HarnessPaths:
    """The machine's paths a case must not see or must still reach (read on the worker)."""

    real_home: Path | None
    project_root: Path
    results: Path
    work_root: Path
    package: Path
    #: the template environments' folder, which ``--bench-env-templates`` may put outside the work root
    templates: Path | None = None
    interpreters: tuple[Path, ...] = ()
    programs: tuple[Path, ...] = ()
    extra: tuple[Path, ...] = field(default_factory=tuple)


def harness_paths(
    *,
    project_root: str,
    results: str,
    work_root: str,
    templates: str | Path | None = None,
    tool_python: str | None = None,
    tool_checkout: str | None = None,
    environ: Mapping[str, str] = os.environ,
) -> HarnessPaths:
    """The harness's own locations: what is hidden, and what must stay reachable read-only.

    ``tool_python`` is the interpreter the tool under test runs in, ``tool_checkout`` the source
    checkout it runs from (if any): both stay reachable.
    """
    home = environ.get("HOME")
    interpreters = [
        Path(sys.prefix),
        Path(sys.base_prefix),
        Path(sys.exec_prefix),
        *interpreter_roots(Path(sys.executable)),
    ]
    extra: list[Path] = []
    if tool_python:
        interpreters += interpreter_roots(Path(tool_python))
    if tool_checkout:
        extra.append(_real(Path(tool_checkout).expanduser()))
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
        templates=_real(templates) if templates else None,
        package=_real(Path(__file__).parent.parent),
        interpreters=tuple(unique_by_depth(_real(p) for p in interpreters)),
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
    if paths.templates is not None:  # mounted under a case's venv as its view, never seen whole
        hidden.append(paths.templates)
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
    "INSTALL_HINT",
    "INSTALL_STEPS",
    "OUTSIDE_STEPS",
    "PROBE_TIMEOUT_S",
    "SANDBOX_MODES",
    "SCRATCH_TMP_BYTES",
    "SUITE_STEPS",
    "CaseLayout",
    "HarnessPaths",
    "Policy",
    "Probe",
    "SandboxExecutor",
    "SandboxMode",
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
]
