"""What a whole round shares: computed once on the controller, handed to workers as JSON.

xdist hands a worker builtin types only, so the context travels as one JSON text
(``to_json``); a worker validates it back (``from_json``) instead of recomputing (and possibly
disagreeing on) the cutoff time, the tool under test or the harness's own commit. The tool, its
packs, the harness and the sandbox are the models that describe them everywhere else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from pytest_obelize_bench._util.strict_model import FrozenModel
from pytest_obelize_bench.case.templates import TEMPLATES_DIR
from pytest_obelize_bench.isolation.gitquery import HarnessInfo
from pytest_obelize_bench.isolation.sandbox_probe import Settings
from pytest_obelize_bench.tool.info import ToolInfo
from pytest_obelize_bench.tool.packs import PackInfo

WORKERINPUT_KEY = "obelize_bench_context"


class RoundContext(FrozenModel):
    mode: Literal["round", "fixtures"]
    round: int | None
    project_root: str
    cases_path: str
    fixtures_dir: str
    results_dir: str
    work_root: str
    #: the template environments' folder, set by the session (``--bench-env-templates``, else the base
    #: work root's ``env-templates``); None: ``<work_root>/env-templates``
    env_templates: str | None = None
    #: compile a template's modules when it is built (``--bench-template-bytecode``, ``venv_views.compiled``)
    template_bytecode: bool = True
    repo_cache: str | None = None
    interpreter_policy: Literal["exact", "minor"] = "exact"
    python_search: tuple[str, ...] = ()
    exclude_newer: str | None = None
    uv_cache: str | None = None
    allow_dirty: bool = False
    #: the obelize under test (None when the session resolved none: ``--collect-only``)
    tool: ToolInfo | None = None
    #: what the tool says of each pack the round's cases use, by pack name
    packs: dict[str, PackInfo] = Field(default_factory=dict)
    harness: HarnessInfo = HarnessInfo()
    #: seconds per step name (``limits.DEFAULT_LIMITS`` with ``--bench-step-timeout`` over them)
    step_limits: dict[str, float] = Field(default_factory=dict)
    #: probed once on the controller, never again on a worker.
    sandbox: Settings = Settings()
    # -- workers on other machines (remote.py) --
    #: the session marker's token under ``work_root``: a worker that finds it shares the controller's paths
    work_token: str | None = None
    #: the absolute path of an ``--obelize=PATH`` checkout, which a remote worker must have too
    tool_checkout: str | None = None
    #: sha256 of the case file: a remote worker collects its own clone's and must hold the same bytes
    cases_sha256: str | None = None
    #: set on a worker only: ``gw3@host``, whether it derived its own paths, why it refuses every case
    worker: str | None = None
    remote: bool = False
    refusal: str | None = None

    @property
    def round_label(self) -> str:
        return "fixtures" if self.mode == "fixtures" else f"round-{self.round}"

    @property
    def templates_dir(self) -> Path:
        """Where the template environments are: shared by every work root that names the same folder."""
        return Path(self.env_templates) if self.env_templates else Path(self.work_root) / TEMPLATES_DIR

    @property
    def round_results(self) -> Path:
        return Path(self.results_dir) / self.round_label

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str) -> RoundContext:
        return cls.model_validate_json(text)
