"""What every comparison item needs, computed once on the controller and carried to workers typed.

A worker validates it once, when it starts, instead of each case reading keys out of a dict.
"""

from __future__ import annotations

from pytest_obelize_bench._util.strict_model import FrozenModel
from pytest_obelize_bench.case.context import RoundContext
from pytest_obelize_bench.comparison.arm import ArmFile
from pytest_obelize_bench.isolation.gitquery import HarnessInfo
from pytest_obelize_bench.tool.info import ToolInfo

#: The xdist workerinput key that carries the context.
WORKERINPUT_KEY = "obelize_bench_compare"


class ComparisonContext(FrozenModel):
    round: int
    arm: ArmFile
    arm_sha256: str
    guide_path: str
    guide_sha256: str
    guide_bytes: int
    template: str
    template_sha256: str
    project_root: str
    results_dir: str
    work_root: str
    #: a neutral root named by a digest, outside the work root: no path the agent sees names the project
    blind_root: str
    keep: str
    repo_cache: str | None
    #: None on a collect-only session, which runs nothing
    tool: ToolInfo | None
    sandbox_program: str | None
    exclude_newer: str | None
    #: the context the suites' stages read; its work root is the comparison's own
    round_context: RoundContext
    #: the dev cases the agent runs a second time
    repeat: list[str]
    harness: HarnessInfo

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str) -> ComparisonContext:
        return cls.model_validate_json(text)


__all__ = ["WORKERINPUT_KEY", "ComparisonContext"]
