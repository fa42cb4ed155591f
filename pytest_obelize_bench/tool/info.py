"""The resolved tool: how to run the obelize under test and what it is.

The controller resolves it once (``tool_env``); it travels to the workers as JSON inside the round
context, and every record's provenance comes from it.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Literal

Source = Literal["installed", "requirement", "checkout"]


class ToolError(Exception):
    """The tool cannot be resolved; the message is one line a user can act on."""


@dataclass(frozen=True)
class ToolInfo:
    """How to run the obelize under test, and what it is (provenance for every record)."""

    argv_prefix: tuple[str, ...]
    python: str
    version: str
    commit: str | None
    tree_dirty: bool | None
    source: Source
    spec: str | None
    #: The upload cutoff the named release was exempted to (``--exclude-newer-package``) while its
    #: dependencies resolved as of the round's ``exclude_newer``; null for an installed obelize, a
    #: source checkout, or a venv built with no cutoff.
    exclude_newer_tool: str | None = None

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> ToolInfo:
        try:
            data = json.loads(text)
        except ValueError as error:
            raise ToolError(f"tool info is not JSON: {error}") from None
        fields = {field.name for field in dataclasses.fields(cls)}
        if not isinstance(data, dict) or set(data) != fields:
            raise ToolError(f"tool info must be an object with exactly the keys {sorted(fields)}")
        prefix = data["argv_prefix"]
        ok = (
            isinstance(prefix, list)
            and prefix
            and all(isinstance(arg, str) for arg in prefix)
            and isinstance(data["python"], str)
            and isinstance(data["version"], str)
            and (data["commit"] is None or isinstance(data["commit"], str))
            and (data["tree_dirty"] is None or isinstance(data["tree_dirty"], bool))
            and data["source"] in ("installed", "requirement", "checkout")
            and (data["spec"] is None or isinstance(data["spec"], str))
            and (data["exclude_newer_tool"] is None or isinstance(data["exclude_newer_tool"], str))
        )
        if not ok:
            raise ToolError("tool info has a field of the wrong type")
        return cls(**{**data, "argv_prefix": tuple(prefix)})


__all__ = ["Source", "ToolError", "ToolInfo"]
