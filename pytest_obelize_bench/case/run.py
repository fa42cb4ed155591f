"""One case's state as it moves from stage to stage, and the kind of case it is.

``CaseRun`` is what the fixtures hand on; ``CaseKind`` is what differs between a fixture and a
repository of the case file (where the tree comes from, whether the SDKs are installed, how the
result is judged), chosen once when the case starts instead of a flag tested at every stage.
"""

from __future__ import annotations

import errno
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench.case.context import RoundContext
from pytest_obelize_bench.casefile.cases import Case
from pytest_obelize_bench.casefile.reviews import ReviewBook
from pytest_obelize_bench.grading.record import Record, SuiteResult
from pytest_obelize_bench.isolation.limits import limit

if TYPE_CHECKING:
    from pytest_obelize_bench.case.environment import Interpreter
    from pytest_obelize_bench.isolation.elide import Elider
    from pytest_obelize_bench.isolation.executor import Executor
    from pytest_obelize_bench.isolation.sandbox import SandboxExecutor
    from pytest_obelize_bench.isolation.steps import StepRunner
    from pytest_obelize_bench.isolation.workspace import Workspace


class CaseKind(Protocol):
    """What differs between kinds of case; every other stage is the same for all of them."""

    @property
    def offline(self) -> bool:
        """Every step runs without the network, and nothing is installed."""
        ...

    def step_variables(self, context: RoundContext) -> dict[str, str]:
        """Variables every step of the case gets beyond the allow-list."""
        ...

    def wrap(self, executor: Executor) -> Executor:
        """The executor the case's steps run through."""
        ...

    def checkout(self, run: CaseRun) -> None: ...

    def venv(self, run: CaseRun) -> None: ...

    def legacy_sdk(self, run: CaseRun) -> None: ...

    def new_sdk(self, run: CaseRun) -> None: ...

    def exclude_newer(self, context: RoundContext) -> str | None:
        """The cutoff the record names (None when nothing was resolved)."""
        ...

    def judge(self, run: CaseRun, record: Record, *, update_expected: bool) -> str | None:
        """After the record is built: why the item fails, when the kind has an expectation it missed."""
        ...


@dataclass
class CaseRun:
    """Everything one case has done so far; the fixtures hand it from stage to stage."""

    case: Case
    context: RoundContext
    run_at: str
    #: what kind of case this is: how it is checked out, given a venv and judged.
    kind: CaseKind
    attempt_number: int = 1
    #: the round's reviews as the session read them once; None: this case reads its own file (a
    #: fixture's ``reviews.yaml``) when its patch is graded
    reviews: ReviewBook | None = None
    workspace: Workspace | None = None
    runner: StepRunner | None = None
    elider: Elider | None = None
    interpreter: Interpreter | None = None
    env: dict[str, str] = field(default_factory=dict)
    error: CaseError | None = None
    crash: str | None = None
    sdk_from: str | None = None
    sdk_to: str | None = None
    packages_sha256: str | None = None
    #: ``envreuse.command_material`` of the install commands, taken before they ran; None: unshared.
    install_material: list[str] | None = None
    uv_version: str | None = None
    #: ``templates.py``: the key of the case's template and how its venv came from it.
    env_template: str | None = None
    env_view: str | None = None
    #: the key of the installed template the case's view took for its after suite, or built.
    env_template_after: str | None = None
    #: the sandbox around this case's steps (None without one): it mounts a template's overlay
    #: (``overlay``), or shows read-only the template a copy view links its bytecode to.
    sandbox: SandboxExecutor | None = None
    baseline: SuiteResult = field(default_factory=SuiteResult)
    after: SuiteResult = field(default_factory=SuiteResult)
    artefacts: Any = None
    patch_compiles: bool | None = None
    runtime_seconds: float | None = None
    #: sha256 of the patch obelize wrote (its run folder's patch.diff): what a review answers for.
    patch_sha256: str | None = None

    @property
    def offline(self) -> bool:
        """Every step runs without the network (the fixtures pass)."""
        return self.kind.offline

    @property
    def overlay(self) -> SandboxExecutor | None:
        """The case's sandbox when its bwrap mounts overlays (the session's choice), else None."""
        return self.sandbox if self.context.sandbox.overlay else None

    @property
    def checkout(self) -> Path:
        return self.tree().checkout

    # A stage reads what an earlier stage set; reaching one before it is set is a harness bug.
    def tree(self) -> Workspace:
        return _set(self.workspace, "workspace")

    def steps(self) -> StepRunner:
        return _set(self.runner, "runner")

    def venv(self) -> Interpreter:
        return _set(self.interpreter, "interpreter")

    def limit(self, step: str) -> float:
        """The step's time limit for this round (``--bench-step-timeout`` over the defaults)."""
        return limit(self.context.step_limits, step)

    def attempt(self, stage: Callable[[], None]) -> CaseRun:
        """Run a stage unless an earlier one failed; turn any failure into this case's error."""
        if self.error is not None:
            return self
        try:
            stage()
        except CaseError as exc:
            self.error = exc
        except KeyboardInterrupt:
            raise  # Ctrl-C or SIGTERM: the controller records the running case as interrupted
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                self.error = CaseError("harness", "harness_crashed", f"{type(exc).__name__}: {exc}"[:500])
                self.crash = traceback.format_exc()
                return self
            # The work root filled up: the machine's failure, and the round goes on.
            self.error = CaseError("harness", "disk_full", f"the work root's disk is full: {exc}"[:500])
        except BaseException as exc:  # a harness bug, or pytest-timeout: still a record
            if _is_pytest_timeout(exc):
                self.error = CaseError("harness", "timeout", "pytest-timeout ended the item; its step was killed")
                return self
            self.error = CaseError("harness", "harness_crashed", f"{type(exc).__name__}: {exc}"[:500])
            self.crash = traceback.format_exc()
        return self


def _is_pytest_timeout(exc: BaseException) -> bool:
    """pytest-timeout's signal method fails the item with ``pytest.fail("Timeout (>Ns) ...")``.

    Recognised by pytest's outcome base class, named rather than imported, so the case layer
    needs no pytest.
    """
    outcome = any(f"{kind.__module__}.{kind.__qualname__}" == _PYTEST_OUTCOME for kind in type(exc).__mro__)
    return outcome and "pytest-timeout" in str(exc)


_PYTEST_OUTCOME = "_pytest.outcomes.OutcomeException"


def _set[T](value: T | None, name: str) -> T:
    if value is None:
        raise RuntimeError(f"the case's {name} is used before the stage that sets it ran")
    return value


__all__ = ["CaseKind", "CaseRun"]
