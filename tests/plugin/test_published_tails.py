"""A suite that prints the machine it runs on: what a round publishes of its log keeps none of it.

One real round of the ``clean`` fixture, whose suite gains a test that prints the user's home as
the password database gives it, the user's and the host's names, a path under the machine's
temporary folder, a path under the work root, its own file's absolute path and a relative path
inside the case. The published tails (``artefacts/<case>.tails.json``) and the case's page under
``docs/results/`` must hold none of the machine's values, and the relative path as it was.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import socket
import tempfile
from pathlib import Path

import pytest

from tests.helpers import rounds

CASE = "ann__clean"
RELATIVE = "relative: tests/test_machine.py and src/app.py"

MACHINE_SUITE = """\
import os
import pwd
import socket
from pathlib import Path


def test_prints_the_machine():
    entry = pwd.getpwuid(os.getuid())
    print(f"home: {{entry.pw_dir}} and '{{entry.pw_dir}}/.config'")
    print(f"user={{entry.pw_name}} host: {{socket.gethostname()}} as {{entry.pw_name}}@{{socket.gethostname()}}")
    print("elsewhere: {elsewhere}")
    print("work={work}/stray/x.log")
    print(f"own: {{Path(__file__).resolve()}}")
    print({relative!r})
"""


def _without_labels(text: str) -> str:
    """``text`` less its labels, so a name that is also a label's word (a user called ``user``) is
    looked for only where the machine put it."""
    return re.sub(r"<[a-z-]+>", " ", text)


@pytest.mark.usefixtures("index_uv_cache")
def test_published_tails_and_the_case_page_name_nothing_of_the_machine(tmp_path: Path) -> None:
    work = tmp_path / "work"
    elsewhere = Path(tempfile.gettempdir()) / f"elsewhere-{tmp_path.name}" / "data.txt"
    suite = MACHINE_SUITE.format(elsewhere=elsewhere, work=work, relative=RELATIVE)
    row = rounds.case_row_from_fixture(
        "clean", "ann", tmp_path, test_cmd="python -m pytest -q -s -p no:cacheprovider tests"
    )
    row = rounds.with_files(row, tmp_path, {"tests/test_machine.py": suite})
    project = tmp_path / "project"
    rounds.write_case_file(project / "cases" / "cases.yaml", [row])
    (project / "docs" / "results").mkdir(parents=True)  # the publication writes the results pages beside
    done = rounds.run_pytest(
        project, "--bench-round=2", "--bench-allow-dirty", "--bench-interpreter=minor", f"--bench-work={work}"
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]

    tails = json.loads((project / "results" / "round-2" / "artefacts" / f"{CASE}.tails.json").read_text("utf-8"))
    page = (project / "docs" / "results" / "round-2" / f"{CASE}.md").read_text("utf-8")
    entry = pwd.getpwuid(os.getuid())
    paths = [entry.pw_dir + "/", f"{entry.pw_dir}'", str(work), str(elsewhere), tempfile.gettempdir() + "/"]
    names = [name for name in (entry.pw_name, socket.gethostname()) if name]
    for where, text in [("baseline tail", tails["baseline"]), ("after tail", tails["after"]), ("case page", page)]:
        assert [path for path in paths if path in text] == [], where
        bare = _without_labels(text)
        assert [name for name in names if re.search(rf"\b{re.escape(name)}\b", bare, re.IGNORECASE)] == [], where

    after = tails["after"]
    assert re.search(r"home: <(harness-)?home> and '<(harness-)?home>/\.config'", after), after
    assert "user=<user> host: <host> as <user>@<host>" in after
    assert "elsewhere: <path>" in after and "work=<work>/stray/x.log" in after
    assert "own: <case>/tests/test_machine.py" in after
    assert RELATIVE in after and RELATIVE in page
    assert "<user>@<host>" in page and "elsewhere: <path>" in page  # the page shows the tails as published
