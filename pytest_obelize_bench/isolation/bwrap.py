"""The bwrap command line of one sandboxed step: its namespaces, and its mounts in the right order.

Pure: it reads nothing but whether the paths exist, so tests can check every mount a policy gives.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

#: Size cap of a step's private ``/tmp`` (memory-backed); TMPDIR points to disk anyway.
SCRATCH_TMP_BYTES = 1024 * 1024 * 1024


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


@dataclass(frozen=True)
class Policy:
    """The mounts and namespaces of one sandboxed step (absolute, resolved paths)."""

    writable: tuple[Path, ...] = ()
    read_only: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    masked: tuple[Path, ...] = ()
    network: bool = False
    scratch_bytes: int = SCRATCH_TMP_BYTES
    #: ``(lowers, upper, work, dest)``: an overlay mounted at ``dest`` (bwrap 0.10 and later), its
    #: read-only lower layers lowest first.
    overlays: tuple[tuple[tuple[Path, ...], Path, Path, Path], ...] = ()


def depth_order(path: Path) -> tuple[int, str]:
    """Parents before children: a mount below another must come after it."""
    return len(path.parts), os.fspath(path)


def unique_by_depth(paths: Iterable[Path]) -> list[Path]:
    return sorted(dict.fromkeys(paths), key=depth_order)


def _outermost(paths: Iterable[Path]) -> list[Path]:
    """``paths`` without those inside another of them, parents first."""
    kept: list[Path] = []
    for path in unique_by_depth(paths):
        if not _under(path, kept):
            kept.append(path)
    return kept


def _under(path: Path, roots: Iterable[Path]) -> bool:
    """Whether ``path`` is one of ``roots`` or inside one, by their text: the policy's paths are
    absolute, and ``Path.is_relative_to`` builds every parent to say the same (a step's command
    line took 2.4 ms with it, 0.2 ms by text)."""
    text = os.fspath(path)
    return any(_inside(text, os.fspath(root)) for root in roots)


def _inside(text: str, root: str) -> bool:
    return text == root or text.startswith(root if root.endswith("/") else root + "/")


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
    then the overlays, and last the hidden tmpfs remounted read-only (bwrap needs them writable while it creates the
    mount points of what is bound inside).  Paths that do not exist are left out; ``/`` is never
    hidden.  A read-only exposure outside every hidden folder is already visible and left out.
    """
    root = Path("/")
    scratch = Path("/tmp")
    hidden = _outermost(p for p in policy.hidden if p != root and p != scratch and is_dir(p))
    covered = [scratch, *hidden]

    def reveals(path: Path) -> bool:  # binding it would uncover a hidden folder
        return any(_under(each, [path]) for each in hidden)

    writable = [p for p in unique_by_depth(policy.writable) if exists(p) and not reveals(p)]
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
    for path in unique_by_depth(policy.masked):
        if exists(path) and not is_dir(path) and not _under(path, covered):
            args += ["--ro-bind", os.devnull, os.fspath(path)]
    for path in writable:
        args += ["--bind", os.fspath(path), os.fspath(path)]
    # An overlay goes over the writable bind of the folder that holds it (a case's venv in its
    # checkout): lower the read-only template (and what was installed over it), upper and work the
    # case's own folders.  bwrap stacks each --overlay-src over the ones before it.
    for lowers, upper, work, dest in policy.overlays:
        for lower in lowers:
            args += ["--overlay-src", os.fspath(lower)]
        args += ["--overlay", os.fspath(upper), os.fspath(work), os.fspath(dest)]
    for path in hidden:
        args += ["--remount-ro", os.fspath(path)]
    args += ["--chdir", os.fspath(cwd), "--clearenv"]
    for name in sorted(env):
        args += ["--setenv", name, env[name]]
    args += ["--", *[os.fspath(arg) for arg in argv]]
    return args


__all__ = [
    "SCRATCH_TMP_BYTES",
    "Policy",
    "bwrap_argv",
    "depth_order",
    "namespace_flags",
    "unique_by_depth",
]
