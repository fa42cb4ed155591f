"""The harness's fixed choices, kept in one place so no two modules can disagree about them.

* the protocol's step numbers (``Step``), and those of a Gate 1 or dry-run measurement;
* the time limits of the steps (``DEFAULT_LIMITS``, which ``--bench-step-timeout`` overrides) and
  of the harness's own short commands;
* which environment names a program inherits: one base list, with the variants derived from it;
* the leading words of a command that mean "the case's interpreter";
* which uv runs: the one installed with this package, never PATH's.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Mapping
from enum import IntEnum
from types import MappingProxyType


class Step(IntEnum):
    """The protocol's numbered steps, as a record's ``steps[].number`` shows them."""

    FETCH = 1
    VENV = 2  # and ``resolve``: asking the new venv what it runs
    INSTALL = 3  # the case's reviewed install commands
    INSTALL_FROM = 4
    BASELINE = 5
    FIX = 6  # and ``compile``
    INSTALL_TO = 7  # and ``freeze``
    AFTER = 8


class MeasureStep(IntEnum):
    """The steps of one repository of a Gate 1 scan or a fix dry run."""

    FETCH = 1
    OBELIZE = 2  # ``scan``, or the dry-run ``fix``
    RUNTIME = 3  # what the repository declares about its Python


# -- time limits ----------------------------------------------------------------------------

#: Seconds each step may take before its process group is killed and the case errors (timeout).
DEFAULT_LIMITS: Mapping[str, float] = MappingProxyType(
    {
        "fetch": 300.0,
        "venv": 300.0,
        "install": 900.0,
        "baseline": 600.0,
        "fix": 900.0,
        "compile": 120.0,
        "after": 600.0,
    }
)
#: Seconds the case interpreter may take to say what it is, or which version of a package it has.
ASK_INTERPRETER_S = 120.0
#: Seconds ``uv pip freeze`` may take.
FREEZE_S = 120.0
#: Seconds a tool venv's ``uv venv`` and ``uv pip install`` may take.
TOOL_VENV_S = DEFAULT_LIMITS["venv"]
TOOL_INSTALL_S = DEFAULT_LIMITS["install"]
#: Seconds the tool's interpreter may take to say which obelize it imports, or a pack's digests.
TOOL_PROBE_S = 120.0
#: Seconds a git query about the harness's or a tool checkout's own tree may take.
GIT_QUERY_S = 60.0
#: Seconds ``uv --version`` may take.
UV_VERSION_S = 60.0

# -- what a program inherits -----------------------------------------------------------------

#: What any program needs to find its commands, speak the locale and write scratch files.
BASE_ENVIRONMENT: tuple[str, ...] = ("PATH", "LANG", "LC_ALL", "TMPDIR")
#: Where the package caches are: a step that installs may write them.
PACKAGE_CACHES: tuple[str, ...] = ("UV_CACHE_DIR", "PIP_CACHE_DIR")
#: Where uv's managed interpreters are (read, never downloaded into).
INTERPRETER_LOCATIONS: tuple[str, ...] = ("UV_PYTHON_INSTALL_DIR",)
#: The environment names a step of a case inherits from the harness, when the harness has them.
STEP_ENVIRONMENT: tuple[str, ...] = (*BASE_ENVIRONMENT, "UV_CACHE_DIR", *INTERPRETER_LOCATIONS, "PIP_CACHE_DIR")
#: Network and TLS settings an install of the tool needs to reach the package index (never the
#: credentials of a service: those stay out, with the HOME of the harness's user).
INDEX_ACCESS: tuple[str, ...] = (
    "UV_INDEX_URL",
    "UV_DEFAULT_INDEX",
    "UV_EXTRA_INDEX_URL",
    "UV_INDEX",
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
#: What building a tool venv inherits: a step's names and the index's.
TOOL_INSTALL_ENVIRONMENT: tuple[str, ...] = (*STEP_ENVIRONMENT, *INDEX_ACCESS)
#: Set by the harness for every uv it runs: uv may never download an interpreter.
NO_INTERPRETER_DOWNLOADS: Mapping[str, str] = MappingProxyType({"UV_PYTHON_DOWNLOADS": "never"})
#: Set for git run on the harness's behalf over a tree it did not fetch: no system config, and a
#: read-only query never takes the index lock.
GIT_QUIET: Mapping[str, str] = MappingProxyType({"GIT_CONFIG_NOSYSTEM": "1", "GIT_OPTIONAL_LOCKS": "0"})


def inherited(names: Iterable[str], source: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The names of ``names`` that ``source`` has, with their values, in ``names``' order."""
    return {name: source[name] for name in names if name in source}


# -- commands --------------------------------------------------------------------------------

#: Leading words of a reviewed command or a test command that mean "the case's interpreter".
PYTHON_NAMES = frozenset({"python", "python3"})


@functools.cache
def uv_binary() -> str:
    """The uv installed with this package (never PATH's ``uv``: a pyenv shim for it can fail)."""
    import uv  # here: the plugin loads this module at every start-up, and only a step needs uv

    return os.fspath(uv.find_uv_bin())


__all__ = [
    "ASK_INTERPRETER_S",
    "BASE_ENVIRONMENT",
    "DEFAULT_LIMITS",
    "FREEZE_S",
    "GIT_QUERY_S",
    "GIT_QUIET",
    "INDEX_ACCESS",
    "INTERPRETER_LOCATIONS",
    "NO_INTERPRETER_DOWNLOADS",
    "PACKAGE_CACHES",
    "PYTHON_NAMES",
    "STEP_ENVIRONMENT",
    "TOOL_INSTALL_ENVIRONMENT",
    "TOOL_INSTALL_S",
    "TOOL_PROBE_S",
    "TOOL_VENV_S",
    "UV_VERSION_S",
    "MeasureStep",
    "Step",
    "inherited",
    "uv_binary",
]
