"""The round's and the fixtures pass's command-line options, as ``pytest --help`` lists them.

Declared here and read once into ``BenchOptions`` (``options.py``); the measurements declare
their own in their plugins. ``obelize-bench docs`` generates the options reference from these calls.
"""

from __future__ import annotations

import pytest

OPTION_ROUND = "--bench-round"
OPTION_FIXTURES = "--fixtures-only"


def add_options(parser: pytest.Parser) -> None:
    """Every ``--bench-*`` option of a round and of the fixtures pass, in ``pytest --help``'s group."""
    group = parser.getgroup("obelize-bench", "obelize migration benchmark")
    group.addoption(
        OPTION_ROUND, type=int, metavar="N", help="run benchmark round N: one item per row of the case file"
    )
    group.addoption(
        OPTION_FIXTURES,
        action="store_true",
        help=(
            "run the offline fixture repositories against their expected.json "
            "(no network, no program but this interpreter)"
        ),
    )
    group.addoption(
        "--bench-cases", metavar="PATH", default="cases/cases.yaml", help="the case file (default: %(default)s)"
    )
    group.addoption(
        "--bench-fixtures", metavar="DIR", default="cases/fixtures", help="the fixtures folder (default: %(default)s)"
    )
    group.addoption(
        "--bench-results",
        metavar="DIR",
        default="results",
        help="where records and the summary go (default: %(default)s)",
    )
    group.addoption("--bench-split", choices=("dev", "holdout"), help="run one side of the split only")
    group.addoption(
        "--bench-fail-on",
        metavar="TIERS",
        help="comma-separated tiers that make the session exit with status 6, e.g. wrong,error",
    )
    group.addoption(
        "--bench-work",
        metavar="DIR",
        help="work root for checkouts and logs (default: <system temp>/obelize-bench-<uid>)",
    )
    group.addoption(
        "--bench-repo-cache", metavar="DIR", help="keep bare repositories at DIR/<owner>/<name>.git and fetch from them"
    )
    group.addoption(
        "--bench-interpreter",
        choices=("exact", "minor"),
        default="exact",
        help="exact: the case's uv key as written; minor: the same implementation and minor version on this machine",
    )
    group.addoption(
        "--bench-python-path",
        action="append",
        default=[],
        metavar="DIR",
        help="a folder holding interpreters for uv to find (repeatable); pyenv's versions/*/bin are searched anyway",
    )
    group.addoption(
        "--exclude-newer", metavar="UTC", help="resolve every install as of this UTC time (replays an earlier round)"
    )
    group.addoption(
        "--obelize",
        metavar="SPEC",
        help="the tool under test: a requirement (obelize==0.7.0) or a path to an obelize checkout",
    )
    group.addoption(
        "--bench-step-timeout",
        metavar="LIMITS",
        help="step time limits in seconds, e.g. suite=900,install=1200 (names: fetch, venv, install, baseline, "
        "after, suite, fix, compile; defaults 300, 300, 900, 600, 600, 600, 900, 120)",
    )
    group.addoption(
        "--bench-allow-dirty",
        action="store_true",
        help="run a round on an uncommitted project tree (the records say so)",
    )
    group.addoption(
        "--bench-no-summary", action="store_true", help="the same as --bench-no-publish (kept for old command lines)"
    )
    group.addoption(
        "--bench-no-publish",
        action="store_true",
        help="keep this run's records in results/round-N/runs/<run-id>/ only, even if the run is a complete round",
    )
    group.addoption(
        "--bench-publish-with-infra-errors",
        action="store_true",
        help=(
            "publish a complete run even though some cases errored for "
            "infrastructure reasons (the document says how many)"
        ),
    )
    group.addoption(
        "--bench-rerun",
        choices=("errors", "all-errors"),
        help="with --bench-run=RUN: run again the cases that run recorded as an infrastructure error (errors), or "
        "every errored case, tool errors too (all-errors); the replaced attempts are kept and listed",
    )
    group.addoption("--bench-run", metavar="RUN", help="the run id --bench-rerun works on (see `obelize-bench runs`)")
    group.addoption(  # hook: resume (resume.py)
        "--bench-resume",
        nargs="?",
        const="latest",
        default=None,
        metavar="RUN",
        help="continue run RUN (default: the newest): a case whose finished record has the same content key is kept",
    )
    group.addoption(
        "--bench-no-preflight",
        action="store_true",
        help=(
            "skip the checks before the round (repositories reachable, "
            "interpreters, disk) that otherwise stop it with exit 4"
        ),
    )
    group.addoption(
        "--bench-keep",
        choices=("failed", "all", "none"),
        default="failed",
        help=(
            "which finished cases keep their checkout and venv: failed (errored "
            "ones, the default), all, or none; logs always stay"
        ),
    )
    group.addoption(
        "--bench-repeat",
        type=int,
        default=1,
        metavar="K",
        help="run every selected case K times, each attempt its own item (case[attempt-N]) in a fresh tree",
    )
    group.addoption(
        "--bench-sandbox",
        choices=("auto", "bwrap", "none"),
        default="auto",
        help=(
            "run every step of a repository's code under bubblewrap: auto "
            "(when it works, else warn), bwrap (required), none"
        ),
    )
    group.addoption(
        "--bench-update-expected",
        action="store_true",
        help="with --fixtures-only: rewrite each fixture's expected.json from this run instead of comparing",
    )


__all__ = ["OPTION_FIXTURES", "OPTION_ROUND", "add_options"]
