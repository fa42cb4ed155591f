"""The test phases (steps 5 and 8) and the compile check (step 6)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_obelize_bench.case import suite
from pytest_obelize_bench.case.suite import (
    junit_counts,
    suite_argv,
)

INTERP = Path("/case/.venv/bin/python")

JUNIT = Path("/logs/junit/baseline.xml")


FLAG = f"--junitxml={JUNIT}"


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text).strip() + "\n")
    return path


@pytest.mark.parametrize(
    "command,argv,is_pytest",
    [
        ("python -m pytest -q", [str(INTERP), "-m", "pytest", "-q", FLAG], True),
        ("python3 -m pytest tests", [str(INTERP), "-m", "pytest", "tests", FLAG], True),
        ("pytest -q", ["pytest", "-q", FLAG], True),
        ("py.test -x", ["py.test", "-x", FLAG], True),
        ("/opt/venv/bin/pytest -q", ["/opt/venv/bin/pytest", "-q", FLAG], True),
        ("/opt/venv/bin/py.test", ["/opt/venv/bin/py.test", FLAG], True),
        ("/usr/bin/python3.11 -m pytest", ["/usr/bin/python3.11", "-m", "pytest", FLAG], True),
        (f"{INTERP} -m pytest", [str(INTERP), "-m", "pytest", FLAG], True),
        ("pytest --junitxml=mine.xml", ["pytest", "--junitxml=mine.xml"], True),
        ("pytest --junitxml mine.xml", ["pytest", "--junitxml", "mine.xml"], True),
        ("pytest --junit-xml=mine.xml -q", ["pytest", "--junit-xml=mine.xml", "-q"], True),
        ("python -m pytest --junit-xml mine.xml", [str(INTERP), "-m", "pytest", "--junit-xml", "mine.xml"], True),
        ("make test", ["make", "test"], False),
        ("python check.py", [str(INTERP), "check.py"], False),
        ("python -m unittest discover", [str(INTERP), "-m", "unittest", "discover"], False),
        ("python -m pytest_cov", [str(INTERP), "-m", "pytest_cov"], False),
        ("uv run pytest", ["uv", "run", "pytest"], False),
        ("tox -e py", ["tox", "-e", "py"], False),
        ("mypytest", ["mypytest"], False),
        ("python -c 'print(1)'", [str(INTERP), "-c", "print(1)"], False),
        ("pytest -k 'a and b'", ["pytest", "-k", "a and b", FLAG], True),
    ],
)
def test_suite_argv(command: str, argv: list[str], is_pytest: bool) -> None:
    assert suite_argv(command, interpreter=INTERP, junit=JUNIT) == (argv, is_pytest)


@pytest.mark.parametrize("command", ["", "   ", "pytest 'unclosed"])
def test_suite_argv_refuses_an_unusable_command(command: str) -> None:
    with pytest.raises(ValueError):
        suite_argv(command, interpreter=INTERP, junit=JUNIT)


def test_pytest_shaped_report(tmp_path: Path) -> None:
    report = write(
        tmp_path / "r.xml",
        """
        <?xml version="1.0" encoding="utf-8"?>
        <testsuites><testsuite name="pytest" errors="1" failures="2" skipped="3" tests="10" time="0.1">
        <testcase classname="t" name="a"/></testsuite></testsuites>
    """,
    )
    assert junit_counts(report) == (4, 2, 3, 1)


def test_a_bare_testsuite_root_and_several_suites_are_summed(tmp_path: Path) -> None:
    assert junit_counts(write(tmp_path / "a.xml", '<testsuite tests="5" failures="1" skipped="1"/>')) == (3, 1, 1, 0)
    report = write(
        tmp_path / "b.xml",
        """
        <testsuites tests="99" failures="99">
          <testsuite tests="2" failures="1"/>
          <testsuite tests="3" errors="1" skipped="1"/>
        </testsuites>
    """,
    )
    assert junit_counts(report) == (2, 1, 1, 1)


def test_nested_suites_are_not_counted_twice(tmp_path: Path) -> None:
    report = write(
        tmp_path / "n.xml",
        """
        <testsuites><testsuite tests="5" failures="1">
          <testsuite tests="2" failures="1"/><testsuite tests="3"/>
        </testsuite></testsuites>
    """,
    )
    assert junit_counts(report) == (4, 1, 0, 0)


def test_a_collection_error(tmp_path: Path) -> None:
    report = write(
        tmp_path / "e.xml", '<testsuites><testsuite errors="1" failures="0" skipped="0" tests="1"/></testsuites>'
    )
    assert junit_counts(report) == (0, 0, 0, 1)


@pytest.mark.parametrize(
    "text",
    [
        "not xml at all",
        '<testsuite tests="x"/>',
        '<testsuite tests="-1"/>',
        '<testsuite tests="1" failures="2"/>',
        '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><testsuite tests="1"/>',
    ],
)
def test_unusable_reports_are_none(tmp_path: Path, text: str) -> None:
    assert junit_counts(write(tmp_path / "bad.xml", text)) is None


def test_missing_report_is_none(tmp_path: Path) -> None:
    assert junit_counts(tmp_path / "absent.xml") is None


def test_a_symlinked_report_is_none(tmp_path: Path) -> None:
    real = write(tmp_path / "real.xml", '<testsuite tests="1"/>')
    (tmp_path / "link.xml").symlink_to(real)
    assert junit_counts(tmp_path / "link.xml") is None


def test_a_report_over_the_cap_is_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = tmp_path / "big.xml"
    report.write_text('<testsuite tests="1"/>' + "<!-- padding -->" * 20)
    monkeypatch.setattr(suite, "MAX_JUNIT_BYTES", 100)
    assert junit_counts(report) is None
