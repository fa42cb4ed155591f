"""What the tool under test says of a pack: its sha256, its ScanSpec digest, and whether it bundles it.

Asked of obelize's own loader, in the tool's interpreter, so the record names the rules that ran
rather than what the harness believes they are.
"""

from __future__ import annotations

import contextlib
import json
import re
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from pytest_obelize_bench.isolation.executor import run_program
from pytest_obelize_bench.isolation.policy import BASE_ENVIRONMENT, TOOL_PROBE_S, inherited
from pytest_obelize_bench.tool.answers import keep_answer, kept_answers
from pytest_obelize_bench.tool.info import ToolInfo
from pytest_obelize_bench.tool.installed_answers import answers_folder
from pytest_obelize_bench.tool.venv import read_marker

_HEX64 = re.compile(r"[0-9a-f]{64}")


class PackInfo(BaseModel):
    """What the tool says of one pack: the round context carries it, a record and ``run.json`` name it.

    A hash is null when the tool version has no API to say it or could not load the pack.
    ``bundled`` says whether the release ships the pack at all (obelize 0.1.0 ships only the Gemini
    pack): a frame run with a release that lacks it is recorded as ``pack_absent``, not run.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    pack: str
    pack_sha256: str | None = None
    spec_sha256: str | None = None
    #: null when it could not be told (a pack given as a path, a tool that could not be asked)
    bundled: bool | None = None


#: Runs in the tool's interpreter: the pack's sha256 and its ScanSpec digest, from obelize's own
#: loader; a field the tool version cannot answer stays null.
PACK_PROGRAM = """\
import json, sys
out = {"pack": sys.argv[1], "pack_sha256": None, "spec_sha256": None, "bundled": None}
try:
    import importlib.resources
    parts = sys.argv[1].split("/")
    if len(parts) == 2 and all(part and part not in (".", "..") for part in parts):
        out["bundled"] = importlib.resources.files("obelize").joinpath("packs", *parts, "pack.yaml").is_file()
except Exception:
    pass
try:
    from obelize.packs import loader
    loaded = loader.load(sys.argv[1])
    out["pack_sha256"] = loaded.sha256
    out["spec_sha256"] = loader.spec_digest(loader.to_scan_spec(loaded))
except Exception:
    pass
print(json.dumps(out))
"""


def pack_provenance(tool: ToolInfo, pack: str) -> PackInfo:
    """The pack's hashes from obelize's own pack loader, run in the tool.

    Either hash is null when the tool version has no such API or cannot load the pack; this never
    raises for the tool's sake.  A release's tool venv is asked once (``answers.py``): it cannot
    change; the obelize installed beside the harness is asked again when what it imports changed
    (``installed_answers.py``: the marker its resolution kept, so the package is hashed once a
    session); a source checkout is asked every session, since its packs can.
    """
    venv: Path | None = None
    marker: dict[str, Any] | None = None
    if tool.source == "requirement":
        venv = Path(tool.python).parent.parent
        marker = read_marker(venv)
    elif tool.source == "installed" and tool.answers_marker is not None:
        venv, marker = answers_folder(tool.python), dict(tool.answers_marker)
    name = f"pack:{pack}"
    if venv is not None:
        with contextlib.suppress(ValueError):
            kept = kept_answers(venv, marker).get(name)
            found = None if kept is None else PackInfo.model_validate(kept)
            if found is not None and found.pack == pack and found.bundled is not None:
                return found  # an answer kept before ``bundled`` was asked is asked again
    asked = _ask(tool, pack)
    if asked is None:
        return PackInfo(pack=pack)
    if venv is not None:
        keep_answer(venv, marker, name, asked.model_dump(mode="json"))
    return asked


def _ask(tool: ToolInfo, pack: str) -> PackInfo | None:
    """What the tool says of the pack; None when it could not be asked (not an answer to keep)."""
    env = inherited(BASE_ENVIRONMENT)
    with tempfile.TemporaryDirectory(prefix="obelize-bench-pack-") as scratch:
        env["HOME"] = scratch
        try:
            answer = run_program(
                [tool.python, "-I", "-c", PACK_PROGRAM, pack],
                timeout=TOOL_PROBE_S,
                cwd=Path(scratch),
                env=env,
                log=Path(scratch) / "pack.log",
            )
        except OSError:
            return None
    if answer.timed_out or answer.exit_code != 0:
        return None
    try:
        found = json.loads(answer.output.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None
    if not isinstance(found, dict):
        return None
    hashes = {key: found.get(key) for key in ("pack_sha256", "spec_sha256")}
    update: dict[str, Any] = {k: v for k, v in hashes.items() if isinstance(v, str) and _HEX64.fullmatch(v)}
    if isinstance(found.get("bundled"), bool):
        update["bundled"] = found["bundled"]
    return PackInfo(pack=pack).model_copy(update=update)


__all__ = ["PACK_PROGRAM", "PackInfo", "pack_provenance"]
