"""Template environments: one venv per environment key, built once, and each case's own view of it.

Why: every case used to make a venv and link about 2,600 files of the legacy SDK into it, for every
case, round and attempt, though most cases of a round install exactly the same thing.  A template
is the venv the first case of a key built (interpreter, reviewed install commands, legacy SDK),
copied aside once, right after its install and before any suite ran in it, and never written
again.  A later case of the same key gets a writable view of it instead of its own installs:

* ``overlay``: under a bwrap that mounts overlays (0.10 and later), the template is the lower
  layer and the case's own folder the upper one; nothing is copied, and whatever a case writes
  (an install the template lacks, a suite's ``__pycache__``) lands in its upper layer only;
* ``copy``: otherwise (no sandbox, or an older bwrap), a copy of the template.  Its SDK files
  are symlinks into the uv cache (``--link-mode=symlink``), about 2,250 of its 2,600 entries;
  the copy hard-links each symlink (``tree_copy``: a symlink's target cannot be changed in place,
  so the case can only replace its own entry, never the template's) and copies the rest.  On a
  disk that discards freed blocks, that is less than half of ``cp -a``'s time, and removing the
  case's tree later frees no inode of those links.

The template is compiled before it is copied aside (step ``bytecode``, ``venv_views.compiled``): the
steps run with ``PYTHONDONTWRITEBYTECODE``, so every suite importing the legacy SDK compiled it again.

The record says which (``env_view``: ``overlay``, ``copy``, ``built`` for the case that made the
template, ``installed`` for a case that kept its own installs: its environment has no key, or
another case published the key's template first) and the key (``env_template``, null without one).

The key is ``envreuse.environment_key`` of the legacy SDK's install: the interpreter uv chose, the
cutoff, the uv cache, the install commands' content (a requirements file by its sha256; anything
a key cannot cover leaves the case without a template) and the pin.  A changed requirements file
is a new key, so a new template.  The protocol's checks stay per case: the legacy SDK's version is
read through ``importlib.metadata`` in the case's own view, and the freeze lists that view.

The new SDK has templates too.  The key of the legacy SDK's install followed by the new SDK's pin
(``envreuse.environment_key`` with both) names an *installed* template: the upper layer an install
of the new SDK left over the legacy template, kept as ``delta`` (with its bytecode) beside a manifest naming its base.
An overlay case whose baseline wrote nothing but bytecode caches into its venv (``upper_layer``)
mounts the base and the delta instead of installing the new SDK again (``env_template_after`` in
its record); the first such case installs, and its upper layer, which then holds that install and
nothing else, is published.  Every other case installs into its own view, as before.

The interpreter a request resolves to is remembered per process (``probed``): a case that finds a
template for it needs neither ``uv venv`` nor the ``resolve`` probe.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_obelize_bench._util.locks import exclusive_lock
from pytest_obelize_bench._util.safe_io import read_bounded_file, write_atomically
from pytest_obelize_bench.case import tree_copy
from pytest_obelize_bench.case.copy_layer import Change, write_layer
from pytest_obelize_bench.case.interpreter import Interpreter
from pytest_obelize_bench.isolation.executor import run_program
from pytest_obelize_bench.isolation.policy import BASE_ENVIRONMENT, Step, inherited
from pytest_obelize_bench.isolation.steps import StepRunner

TEMPLATES_DIR = "env-templates"
#: What a record's ``env_view`` may say.
VIEWS = ("overlay", "copy", "built", "installed")
#: Seconds a copy of a template (or its publication) may take.
COPY_TIMEOUT_S = 300.0
_KEY = re.compile(r"[0-9a-f]{64}")
_MANIFEST = "template.json"
_DELTA = "delta"
_MANIFEST_CAP = 16_384

#: Interpreters already resolved by this process: (request, policy, search path) -> what uv chose.
_PROBED: dict[tuple[str, str, tuple[str, ...]], Interpreter] = {}


def probe_key(requested: str, policy: str, search_path: tuple[str, ...]) -> tuple[str, str, tuple[str, ...]]:
    return (requested, policy, tuple(search_path))


def probed(requested: str, policy: str, search_path: tuple[str, ...]) -> Interpreter | None:
    """The interpreter this process already resolved for the request, if any."""
    return _PROBED.get(probe_key(requested, policy, search_path))


def remember(requested: str, policy: str, search_path: tuple[str, ...], interpreter: Interpreter) -> None:
    _PROBED[probe_key(requested, policy, search_path)] = interpreter


def in_view(interpreter: Interpreter, venv: Path) -> Interpreter:
    """``interpreter`` as the case's own venv at ``venv`` runs it."""
    return Interpreter(
        requested=interpreter.requested,
        used=interpreter.used,
        executable=Path(venv) / "bin" / "python",
        build=interpreter.build,
        machine=interpreter.machine,
    )


@dataclass(frozen=True)
class Template:
    """A finished template: its key, its venv (never written again) and the interpreter it runs.

    An installed template (``base`` set) is its base's venv with ``delta``, an install's layer,
    over it: an overlay's upper layer (``form`` ``overlay``), or what the install changed in a copy
    of its base with the deleted entries listed beside (``copy``, ``copy_layer.py``).
    """

    key: str
    venv: Path
    used: str
    build: str
    machine: str
    base: str | None = None
    delta: Path | None = None
    form: str = "overlay"

    @property
    def layers(self) -> tuple[Path, ...]:
        """The read-only layers of a case's view, lowest first."""
        return (self.venv,) if self.delta is None else (self.venv, self.delta)


class Templates:
    """The templates in ``root`` (``<work>/env-templates`` unless ``--bench-env-templates``), one
    folder per key; several work roots may share them, as each key names its uv cache."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def folder(self, key: str) -> Path:
        if not _KEY.fullmatch(key):
            raise ValueError(f"{key!r} is not an environment key")
        return self.root / key

    def find(self, key: str) -> Template | None:
        """The finished template of ``key``; None while none was published (or its manifest is bad)."""
        folder = self.folder(key)
        try:
            data = json.loads(read_bounded_file(folder / _MANIFEST, _MANIFEST_CAP).decode("utf-8"))
            used, build, machine = str(data["used"]), str(data["build"]), str(data["machine"])
            base_key = data.get("base")
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        if base_key is not None:
            return self._installed(key, str(base_key), folder / _DELTA, str(data.get("form", "overlay")))
        venv = folder / "venv"
        if venv.is_symlink() or not (venv / "bin" / "python").exists():
            return None
        return Template(key=key, venv=venv, used=used, build=build, machine=machine)

    def _installed(self, key: str, base_key: str, delta: Path, form: str) -> Template | None:
        try:
            base = self.find(base_key)
        except ValueError:
            return None
        if base is None or base.base is not None or delta.is_symlink() or not delta.is_dir():
            return None
        return Template(key, base.venv, base.used, base.build, base.machine, base=base.key, delta=delta, form=form)

    def publish_copy_layer(
        self, key: str, base: Template, copy: Path, change: Change, bytecode: Mapping[str, Path]
    ) -> bool:
        """Keep what an install changed in ``copy``, a copy of ``base`` that held nothing else
        (``change``, from ``copy_layer.changes``), as the template of ``key`` (form ``copy``), with
        ``bytecode`` compiled afresh for it (``copy_layer.compiled_into``), unless one exists; whole
        or absent, as ``publish``."""
        folder = self.folder(key)
        folder.mkdir(parents=True, exist_ok=True)
        with exclusive_lock(folder / ".lock"):
            if self.find(key) is not None:
                return False
            staging = folder / f"{_DELTA}.{os.getpid()}.tmp"
            shutil.rmtree(staging, ignore_errors=True)
            shutil.rmtree(folder / _DELTA, ignore_errors=True)
            try:
                write_layer(copy, change, staging, bytecode)
            except OSError:
                shutil.rmtree(staging, ignore_errors=True)
                return False
            os.replace(staging, folder / _DELTA)
            manifest = {"base": base.key, "used": base.used, "build": base.build, "machine": base.machine}
            write_atomically(folder / _MANIFEST, json.dumps({**manifest, "form": "copy"}, sort_keys=True) + "\n")
        return self.find(key) is not None

    def publish_installed(self, key: str, base: Template, upper: Path) -> bool:
        """Keep ``upper``, an install's upper layer over ``base`` and nothing else, as the template
        of ``key``, unless one exists; whole or absent, as ``publish``.  True when this call made it."""
        manifest = {"base": base.key, "used": base.used, "build": base.build, "machine": base.machine}
        # Bytecode included: the layer was emptied of caches before the install (``unwritten_template``),
        # so what it holds now is the install and step ``bytecode``'s compilation of it.
        return self._publish(key, upper, _DELTA, manifest)

    def publish(self, key: str, venv: Path, interpreter: Interpreter) -> bool:
        """Copy a case's just-installed venv aside as the template of ``key``, unless one exists.
        True when this call made it."""
        manifest = {"used": interpreter.used, "build": interpreter.build, "machine": interpreter.machine}
        return self._publish(key, venv, "venv", manifest)

    def _publish(self, key: str, source: Path, part: str, manifest: dict[str, str]) -> bool:
        """``source`` copied to ``<key>/<part>`` under a lock, into a temporary folder renamed into
        place, the manifest written last: a template is either whole or absent.  A copy that fails
        leaves no template (and no error: the case goes on with its own venv)."""
        folder = self.folder(key)
        folder.mkdir(parents=True, exist_ok=True)
        with exclusive_lock(folder / ".lock"):
            if self.find(key) is not None:
                return False
            staging = folder / f"{part}.{os.getpid()}.tmp"
            shutil.rmtree(staging, ignore_errors=True)
            shutil.rmtree(folder / part, ignore_errors=True)
            if not _copy_tree(source, staging):
                return False
            os.replace(staging, folder / part)
            write_atomically(folder / _MANIFEST, json.dumps(manifest, sort_keys=True) + "\n")
        return self.find(key) is not None


def _cp() -> str:
    return shutil.which("cp") or "/bin/cp"


def _copy_tree(source: Path, staging: Path) -> bool:
    """``cp -a``: links, modes, and the overlay's whiteouts and attributes kept as they are."""
    copied = run_program(
        [_cp(), "-a", os.fspath(source), os.fspath(staging)],
        env={"PATH": os.defpath, **inherited(BASE_ENVIRONMENT)},
        timeout=COPY_TIMEOUT_S,
    )
    if not copied.ok:
        shutil.rmtree(staging, ignore_errors=True)
    return copied.ok


def copy_view(
    runner: StepRunner,
    template: Template,
    venv: Path,
    *,
    timeout: float = COPY_TIMEOUT_S,
    bytecode: bool = True,
    link_bytecode: bool = False,
) -> None:
    """The ``copy`` view: step ``venv`` copies the template to the case's venv (``tree_copy``, run as a program).

    Its bytecode comes only for a case that runs code in the venv, ``bytecode``: copied (a hard
    link would let the case write the template's), 0.3 to 0.5 s more a copy on the reference
    machine's disk, where a suite that imports the legacy SDK saves some 0.8 s each run; or, with
    ``link_bytecode``, linked to the template's, for a sandbox that shows the template read-only.
    """
    caches = tree_copy.bytecode_mode(bytecode, linked=link_bytecode)
    runner.run(
        Step.VENV,
        "venv",
        [sys.executable, "-I", tree_copy.__file__, os.fspath(template.venv), os.fspath(venv), caches],
        timeout=timeout,
        reason="venv_failed",
    )


__all__ = [
    "TEMPLATES_DIR",
    "VIEWS",
    "Template",
    "Templates",
    "copy_view",
    "in_view",
    "probed",
    "remember",
]
