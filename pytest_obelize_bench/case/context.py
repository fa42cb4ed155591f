"""What a whole round shares: computed once on the controller, handed to workers as JSON.

xdist serialises builtin types only, so the context is a flat JSON document; a worker
rebuilds it from ``config.workerinput`` instead of recomputing (and possibly disagreeing on)
the cutoff time, the tool under test or the harness's own commit.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

WORKERINPUT_KEY = "obelize_bench_context"


@dataclass(frozen=True)
class RoundContext:
    mode: Literal["round", "fixtures"]
    round: int | None
    project_root: str
    cases_path: str
    fixtures_dir: str
    results_dir: str
    work_root: str
    repo_cache: str | None = None
    interpreter_policy: Literal["exact", "minor"] = "exact"
    python_search: tuple[str, ...] = ()
    exclude_newer: str | None = None
    uv_cache: str | None = None
    allow_dirty: bool = False
    tool: dict[str, Any] | None = None
    packs: dict[str, dict[str, Any]] = field(default_factory=dict)
    harness: dict[str, Any] = field(default_factory=dict)
    #: seconds per step name (``limits.DEFAULT_LIMITS`` with ``--bench-step-timeout`` over them)
    step_limits: dict[str, float] = field(default_factory=dict)
    #: ``sandbox.Settings`` as JSON: probed once on the controller, never again on a worker.
    sandbox: dict[str, Any] = field(default_factory=dict)
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
    def round_results(self) -> Path:
        return Path(self.results_dir) / self.round_label

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> RoundContext:
        data = json.loads(text)
        data["python_search"] = tuple(data.get("python_search") or ())
        return cls(**data)
