"""The arm file and the fixed prompt: which agent runs, under which rules, told what.

The arm file names a command-line agent: its argv template (``{prompt}``, ``{tree}``, ``{meta}``),
the guide snapshot it reads (source URL and fetch time; the harness records its sha256), whether
its step gets the network (default none), a time limit, the environment variables it may see,
named one by one, and the paths its own program needs to read.  A bad arm file gets one line
naming the field.

The prompt is the project's fixed file with its leading note stripped; the only per-case content
is the three paths, and a rendering that does not give back the template when the paths are
put back is refused.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator

from pytest_obelize_bench._util.caps import ARM_FILE_BYTES, GUIDE_BYTES, PROMPT_BYTES
from pytest_obelize_bench._util.digests import sha256_bytes
from pytest_obelize_bench._util.documents import parse_yaml
from pytest_obelize_bench._util.safe_io import UntrustedFileError, read_untrusted, read_untrusted_text
from pytest_obelize_bench._util.strict_model import StrictModel
from pytest_obelize_bench._util.validation import problem_text

MAX_ARM_BYTES = ARM_FILE_BYTES
MAX_PROMPT_BYTES = PROMPT_BYTES
MAX_GUIDE_BYTES = GUIDE_BYTES
PLACEHOLDERS = ("{prompt}", "{tree}", "{meta}")
#: The prompt's per-case slots.
SLOTS = ("{{TREE}}", "{{GUIDE}}", "{{META}}")
_PLACEHOLDER = re.compile(r"\{[a-z_]+\}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Variables the harness sets itself for every step; an arm cannot ask for the machine's.
_STEP_OWNED = frozenset({"HOME", "TMPDIR", "PATH"})


class GuideSnapshot(StrictModel):
    file: str = Field(min_length=1)
    url: str = Field(pattern=r"^https?://")
    fetched_at: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


class ArmFile(StrictModel):
    name: str = Field(default="general_agent", pattern=r"^[a-z][a-z0-9_]*$")
    command: list[str] = Field(min_length=1)
    guide: GuideSnapshot
    network: bool = False
    time_limit_seconds: float = Field(gt=0, le=24 * 3600)
    env: list[str] = Field(default_factory=list)
    read_only: list[str] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _not_obelize(cls, value: str) -> str:
        if value in ("obelize", "base"):
            raise ValueError(f"{value!r} names the tool or the untouched tree, not an agent")
        return value

    @field_validator("command")
    @classmethod
    def _template(cls, value: list[str]) -> list[str]:
        for part in value:
            unknown = [found for found in _PLACEHOLDER.findall(part) if found not in PLACEHOLDERS]
            if unknown:
                raise ValueError(f"unknown placeholder {unknown[0]}; the template knows {', '.join(PLACEHOLDERS)}")
        if not any("{prompt}" in part for part in value):
            raise ValueError("the template never passes {prompt}")
        if "{" in value[0]:
            raise ValueError("the program itself cannot be a placeholder")
        return value

    @field_validator("env")
    @classmethod
    def _names(cls, value: list[str]) -> list[str]:
        for name in value:
            if not _ENV_NAME.fullmatch(name):
                raise ValueError(f"{name!r} is not one variable's name")
            if name in _STEP_OWNED:
                raise ValueError(f"{name} is the harness's to set for every step")
        return value

    @field_validator("read_only")
    @classmethod
    def _absolute(cls, value: list[str]) -> list[str]:
        for path in value:
            if not Path(path).is_absolute():
                raise ValueError(f"{path!r} is not an absolute path")
        return value

    def argv(self, *, prompt: Path, tree: Path, meta: Path) -> list[str]:
        """The command for one case: each placeholder replaced by its path."""
        values = {"{prompt}": str(prompt), "{tree}": str(tree), "{meta}": str(meta)}
        out = []
        for part in self.command:
            filled = part
            for placeholder, value in values.items():
                filled = filled.replace(placeholder, value)
            out.append(filled)
        return out


class ArmFileError(ValueError):
    """A bad arm file, in one line naming the field."""


def parse_arm(data: Any, source: str) -> ArmFile:
    try:
        return ArmFile.model_validate(data)
    except ValidationError as exc:
        raise ArmFileError(f"{source}: {problem_text(exc.errors()[0])}") from None


def read_arm(path: Path) -> tuple[ArmFile, str, Path, str]:
    """The arm file, its sha256, its guide snapshot's path and the snapshot's sha256."""
    path = Path(path)
    try:
        text = read_untrusted_text(path, MAX_ARM_BYTES)
        data = parse_yaml(text, str(path))
    except UntrustedFileError as exc:
        raise ArmFileError(str(exc)) from None
    arm = parse_arm(data, str(path))
    guide = Path(arm.guide.file)
    guide = guide if guide.is_absolute() else path.parent / guide
    try:
        guide_bytes = read_untrusted(guide, MAX_GUIDE_BYTES)
    except UntrustedFileError as exc:
        raise ArmFileError(f"{path}: guide.file: {exc}") from None
    return arm, sha256_bytes(text.encode("utf-8")), guide.resolve(), sha256_bytes(guide_bytes)


# -- the fixed prompt ---------------------------------------------------------------------------


class PromptError(ValueError):
    """A prompt template that cannot be used, or a rendering that differs from it."""


def load_template(path: Path) -> str:
    """The prompt file without its leading ``<!-- ... -->`` note; every slot must be in it."""
    try:
        text = read_untrusted_text(Path(path), MAX_PROMPT_BYTES)
    except UntrustedFileError as exc:
        raise PromptError(str(exc)) from None
    if text.startswith("<!--"):
        end = text.find("-->")
        if end < 0:
            raise PromptError(f"{path}: the leading note is never closed")
        text = text[end + 3 :].lstrip("\n")
    missing = [slot for slot in SLOTS if slot not in text]
    if missing:
        raise PromptError(f"{path}: the prompt has no {missing[0]} slot")
    return text


def render_prompt(template: str, *, tree: Path, guide: Path, meta: Path) -> str:
    """The case's prompt: the template with its three paths, and nothing else, filled in."""
    values = (str(tree), str(guide), str(meta))
    for value in values:
        if "{{" in value or "\n" in value:
            raise PromptError(f"path {value!r} cannot be put into the prompt")
    rendered = template
    for slot, value in zip(SLOTS, values, strict=True):
        rendered = rendered.replace(slot, value)
    back = rendered
    for slot, value in sorted(zip(SLOTS, values, strict=True), key=lambda pair: -len(pair[1])):
        back = back.replace(value, slot)
    if back != template:
        raise PromptError("the rendered prompt differs from the template beyond its three paths; refused")
    return rendered


__all__ = [
    "ArmFile",
    "ArmFileError",
    "GuideSnapshot",
    "PromptError",
    "load_template",
    "parse_arm",
    "read_arm",
    "render_prompt",
]
