"""What of a step's output is published: harness paths labelled, every other path and the machine's
names labelled, secrets hidden."""

from __future__ import annotations

from pathlib import Path

from pytest_obelize_bench.isolation.elide import Elider
from pytest_obelize_bench.isolation.machine import MachineNames
from pytest_obelize_bench.isolation.public_text import DETAIL_CHARS, public_detail, public_text

NAMES = MachineNames(user="alice", host="laptop.lan", home="/home/alice")


def test_public_detail_hides_secrets_paths_and_stays_short(tmp_path: Path) -> None:
    home = tmp_path / "home" / "harness"
    elider = Elider([("<work>", tmp_path / "work"), ("<harness-home>", home)])
    environ = {"GITHUB_TOKEN": "ghp_0123456789abcdefSECRET", "SHORT": "abc", "LANG": "C.UTF-8"}.items()
    detail = (
        f"install exited 1: fatal: could not read from https://x:ghp_0123456789abcdefSECRET@example.invalid "
        f"cwd {tmp_path / 'work' / 'round-2'} config {home / '.netrc'} abc\n" + "y" * 500
    )
    shown = public_detail(detail, elider, environ, NAMES)
    assert "ghp_" not in shown and "SECRET" not in shown and "<redacted>" in shown
    assert str(tmp_path) not in shown
    assert "<work>/round-2" in shown and "<harness-home>/.netrc" in shown
    assert "abc" in shown  # a value of 8 characters or fewer is not treated as a secret
    assert "\n" not in shown and len(shown) <= DETAIL_CHARS and shown.endswith("...")


def test_a_suites_output_keeps_nothing_of_the_machine_but_the_cases_tree(tmp_path: Path) -> None:
    case, work = tmp_path / "work" / "round-2" / "ann__clean", tmp_path / "work"
    elider = Elider([("<case>", case), ("<work>", work), ("<home>", NAMES.home or "")])
    printed = "\n".join(
        [
            f"home: {NAMES.home} and '{NAMES.home}/.config' but /home/alicetwo stays another's",
            "user=alice host: laptop (laptop.lan), alice@laptop",
            "made /tmp/pytest-of-alice/stray/data.txt",
            f"wrote {work}/elsewhere/x.log and {case}/tests/test_app.py:12: AssertionError",
            "relative: tests/test_app.py, src/alice/app.py",
        ]
    )
    shown = public_text(printed, elider, [], NAMES)
    assert shown.splitlines() == [
        "home: <home> and '<home>/.config' but <path> stays another's",
        "user=<user> host: <host> (<host>), <user>@<host>",
        "made <path>",
        "wrote <work>/elsewhere/x.log and <case>/tests/test_app.py:12: AssertionError",
        "relative: tests/test_app.py, src/alice/app.py",
    ]


def test_a_secret_is_hidden_before_a_name_inside_it_is_labelled() -> None:
    environ = [("INDEX_URL", "https://alice:hunter22@laptop.lan/simple")]
    shown = public_text("fetching https://alice:hunter22@laptop.lan/simple/pkg", None, environ, NAMES)
    assert shown == "fetching <redacted>/pkg"
