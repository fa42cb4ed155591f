"""The two kinds of case: an offline fixture, and a repository of the case file.

Chosen once per case (``kind_for``), so the stages never ask which mode the session is in. A
fixture is copied from the project, runs on the harness's own interpreter with obelize and the
SDK doubles already there, without network, and must reproduce its ``expected.json``. A
repository is fetched at its pin, gets a venv of its key's interpreter and the pinned SDKs (an
environment already resolved installs offline, ``envreuse.py``), and its record stands as it is.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from pytest_obelize_bench._util.safe_io import write_atomically
from pytest_obelize_bench._util.strict_model import committed_json
from pytest_obelize_bench.case import templates
from pytest_obelize_bench.case.checkout import fetch_checkout
from pytest_obelize_bench.case.context import RoundContext
from pytest_obelize_bench.case.environment import (
    case_environment,
    check_installed_version,
    create_venv,
    packages_digest,
    uv_version,
)
from pytest_obelize_bench.case.interpreter import Interpreter
from pytest_obelize_bench.case.run import CaseKind, CaseRun
from pytest_obelize_bench.case.venv_views import (
    install_sdk,
    new_sdk_onto_copy,
    new_sdk_over,
    own_installs,
    own_venv_for_template,
    published,
    take_template,
    template_for,
    unwritten_copy,
    unwritten_template,
    view_of_built,
)
from pytest_obelize_bench.casefile.cases import PACK_DISTRIBUTIONS, Case
from pytest_obelize_bench.grading.record import Record, comparable, differences
from pytest_obelize_bench.isolation.executor import Executor, OfflineExecutor
from pytest_obelize_bench.isolation.policy import Step

#: Set for every step of a fixture: pytest loads no plugin from an entry point, only those ``-p`` names.
FIXTURE_SUITE_AUTOLOAD = "PYTEST_DISABLE_PLUGIN_AUTOLOAD"
#: Left out of a fixture's copy: caches and any evidence folder a previous run left behind.
FIXTURE_COPY_IGNORE = shutil.ignore_patterns("__pycache__", ".pytest_cache", ".obelize", "*.pyc")


@dataclass(frozen=True)
class FixtureCase:
    """An offline fixture repository of ``cases/fixtures/``."""

    offline: bool = True

    def step_variables(self, context: RoundContext) -> dict[str, str]:
        """A fixture's suite runs on the harness's own interpreter, whose pytest plugins (this
        plugin, xdist, randomly, hypothesis) a case's venv would not have: none of them is loaded,
        so the suite runs in its written order and pays no import of the harness."""
        return {FIXTURE_SUITE_AUTOLOAD: "1"}

    def wrap(self, executor: Executor) -> Executor:
        return OfflineExecutor(executor)

    def checkout(self, run: CaseRun) -> None:
        shutil.copytree(Path(run.case.source or ""), run.checkout, symlinks=True, ignore=FIXTURE_COPY_IGNORE)

    def venv(self, run: CaseRun) -> None:
        run.interpreter = Interpreter(
            requested="",
            used="",
            executable=Path(sys.executable),
            build=" ".join(sys.version.split()),
            machine=platform.machine(),
        )

    def legacy_sdk(self, run: CaseRun) -> None:
        """The fixture's SDK doubles are part of its tree: nothing to install."""

    def new_sdk(self, run: CaseRun) -> None:
        """As for the legacy SDK: nothing to install."""

    def exclude_newer(self, context: RoundContext) -> str | None:
        return None

    def judge(self, run: CaseRun, record: Record, *, update_expected: bool) -> str | None:
        if update_expected:
            write_expected(run.case, record)
            return None
        return check_expected(run.case, record)


@dataclass(frozen=True)
class RepositoryCase:
    """A repository of the case file, fetched at its pinned commit."""

    offline: bool = False

    def step_variables(self, context: RoundContext) -> dict[str, str]:
        variables = {"UV_EXCLUDE_NEWER": context.exclude_newer or ""}
        if context.uv_cache and "UV_CACHE_DIR" not in os.environ:
            variables["UV_CACHE_DIR"] = context.uv_cache
        return variables

    def wrap(self, executor: Executor) -> Executor:
        return executor

    def checkout(self, run: CaseRun) -> None:
        case = run.case
        owner, _, name = (case.full_name or "").partition("/")
        fetch_checkout(
            run.steps(),
            url=case.repo or "",
            sha=case.sha or "",
            dest=run.checkout,
            cache=Path(run.context.repo_cache) if run.context.repo_cache else None,
            owner=owner,
            name=name,
            timeout=run.limit("fetch"),
        )

    def venv(self, run: CaseRun) -> None:
        """Step 2: a view of the template of the case's key when one exists, else a new venv."""
        run.uv_version = uv_version()
        venv = run.checkout / ".venv"
        request = (run.case.python or "", run.context.interpreter_policy, tuple(run.context.python_search))
        known = templates.probed(*request)
        template = template_for(run, known.used) if known is not None else None
        if known is not None and template is not None:
            take_template(run, template, known)
        else:
            run.interpreter = create_venv(
                run.steps(),
                key=run.case.python or "",
                policy=run.context.interpreter_policy,
                venv=venv,
                search_path=[Path(p) for p in run.context.python_search],
                timeout=run.limit("venv"),
            )
            templates.remember(*request, run.interpreter)
        run.env = case_environment(run.env, venv)
        run.steps().env = run.env

    def legacy_sdk(self, run: CaseRun) -> None:
        """Steps 3 and 4: the template's legacy SDK checked in the case's view, or installs of its own."""
        case = run.case
        legacy, _ = PACK_DISTRIBUTIONS[case.pack]
        if run.env_view is None:  # a venv of its own: a template may exist by now
            template = template_for(run, run.venv().used)
            if template is not None:
                own_venv_for_template(run, template)
        if run.env_view in ("overlay", "copy"):
            # The protocol's check stays per case: importlib.metadata in the case's own view.
            run.sdk_from = check_installed_version(
                run.steps(),
                number=Step.INSTALL_FROM,
                name="install-from-check",
                distribution=legacy,
                version=case.from_version or "",
                interpreter=run.venv().executable,
            )
            return
        own_installs(run)
        run.sdk_from = published(
            run, lambda: install_sdk(run, Step.INSTALL_FROM, "install-from", legacy, case.from_version or "", [])
        )
        view_of_built(run)

    def new_sdk(self, run: CaseRun) -> None:
        """Step 7: the new SDK over the view the baseline ran in, installed or, when that view is
        still its template's, mounted from the template of that install (``templates.py``)."""
        case = run.case
        legacy, new = PACK_DISTRIBUTIONS[case.pack]
        before = [f"{legacy}=={case.from_version}"]
        base = unwritten_template(run)
        copied = None if base is not None else unwritten_copy(run)
        if base is not None:
            run.sdk_to = new_sdk_over(run, base, new, case.to_version or "", before)
        elif copied is not None:
            run.sdk_to = new_sdk_onto_copy(run, copied, new, case.to_version or "", before)
        else:
            run.sdk_to = install_sdk(run, Step.INSTALL_TO, "install-to", new, case.to_version or "", before)
        run.packages_sha256 = packages_digest(run.steps(), interpreter=run.venv().executable, checkout=run.checkout)

    def exclude_newer(self, context: RoundContext) -> str | None:
        return context.exclude_newer

    def judge(self, run: CaseRun, record: Record, *, update_expected: bool) -> str | None:
        """A repository has no expectation: its record is the result."""
        return None


def kind_for(context: RoundContext) -> CaseKind:
    """The kind of every case of this session."""
    return FixtureCase() if context.mode == "fixtures" else RepositoryCase()


# -- a fixture's expectation -------------------------------------------------------------------


def expected_path(case: Case) -> Path:
    return Path(case.source or "").parent / "expected.json"


def write_expected(case: Case, record: Record) -> None:
    """Rewrite a fixture's expected.json from this run (when obelize changed on purpose)."""
    write_atomically(expected_path(case), committed_json(comparable(record)))


def check_expected(case: Case, record: Record) -> str | None:
    """Why a fixture missed its committed expected.json over the comparable view; None when it did not."""
    path = expected_path(case)
    if not path.is_file():
        return f"{path} is missing; write it with `obelize-bench fixtures --update`"
    try:
        want = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        return f"{path}: not JSON: {exc}"
    lines = differences(comparable(record), want)
    if lines:
        return f"{case.id} differs from {path}:\n  " + "\n  ".join(lines)
    return None


__all__ = ["FixtureCase", "RepositoryCase", "check_expected", "expected_path", "kind_for", "write_expected"]
