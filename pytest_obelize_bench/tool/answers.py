"""What a release's tool venv answered (which obelize it imports, each pack's digests), kept in it.

Why: a session asked them of the tool every time, two interpreter starts, one importing obelize
and loading the pack, about half a second of every round's fixed cost.  A release's venv is never
written after its marker, so its answers cannot change: they are kept beside the marker and read
while the marker is the same.  A rebuilt venv starts without them.  The obelize installed beside
the harness keeps its answers in the harness's venv under a marker of its content
(``installed_answers.py``); a source checkout is asked every session.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_obelize_bench._util.safe_io import read_bounded_file, write_atomically

ANSWERS = "bench-tool-answers.json"
_ANSWERS_CAP = 65_536


def read_answers(venv: Path) -> dict[str, Any]:
    """Whatever answers ``venv`` keeps, under whichever marker (``marker`` among them); empty if none."""
    try:
        data = json.loads(read_bounded_file(venv / ANSWERS, _ANSWERS_CAP).decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def kept_answers(venv: Path, marker: Mapping[str, Any] | None) -> dict[str, Any]:
    """The answers kept in ``venv`` under ``marker`` (its current one); empty otherwise."""
    data = read_answers(venv)
    if marker is None or data.get("marker") != dict(marker):
        return {}
    return data


def keep_answer(venv: Path, marker: Mapping[str, Any] | None, name: str, answer: Any) -> None:
    """Keep one answer of ``venv`` under ``marker``; a folder that cannot be written only costs
    asking again next session."""
    if marker is None:
        return
    data = {**kept_answers(venv, marker), "marker": dict(marker), name: answer}
    try:
        write_atomically(venv / ANSWERS, json.dumps(data, sort_keys=True) + "\n")
    except OSError:
        return


__all__ = ["ANSWERS", "keep_answer", "kept_answers", "read_answers"]
