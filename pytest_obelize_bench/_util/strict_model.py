"""The one base of every document model the harness reads or writes: an unknown field is an error.

A file written by hand (a case file, a key, a review) or by a session (a record, a manifest) that
carries a field the model does not know is refused with one line naming it, never silently read.
``FrozenModel`` adds that a value, once read, is not changed; ``StrictRow`` that a reviewed row is
taken as written (no ``"3"`` for ``3``). A model that needs more sets it in its own ``model_config``,
which pydantic merges with its base's.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FrozenModel(StrictModel):
    model_config = ConfigDict(frozen=True)


class StrictRow(FrozenModel):
    model_config = ConfigDict(strict=True)


def committed_json(document: BaseModel | object) -> str:
    """A document (a model, or JSON data) as the harness writes it to disk: sorted keys, indent 2, a
    trailing newline, so the same document is the same bytes and a change to it is a small diff."""
    data = document.model_dump(mode="json") if isinstance(document, BaseModel) else document
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


__all__ = ["FrozenModel", "StrictModel", "StrictRow", "committed_json"]
