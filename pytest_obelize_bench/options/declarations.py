"""Every command-line option of the benchmark, as ``pytest --help`` lists them.

The round's and the fixtures pass's options, then Gate 1's, the dry run's and the comparison's,
in one group. Declared here and read once into ``BenchOptions`` (``read.py``), so the session and
the measurements take typed fields and no option string. ``obelize-bench docs`` generates the
options reference from these calls.
"""

from __future__ import annotations

import pytest

OPTION_ROUND = "--bench-round"
OPTION_FIXTURES = "--fixtures-only"
OPTION_GATE1 = "--bench-gate1"
OPTION_DRYRUN = "--bench-dryrun"
OPTION_FRAME = "--bench-frame"
OPTION_GATE1_CASES = "--bench-gate1-cases"
OPTION_COMPARE = "--bench-compare"
OPTION_COMPARE_REPEAT = "--bench-compare-repeat"
#: the frame Gate 1 measures when ``--bench-frame`` names none.
DEFAULT_GATE1_FRAME = "cases/gate1/sample.yaml"


def add_options(parser: pytest.Parser) -> None:
    """Every option of the benchmark, in ``pytest --help``'s group, in the order the reference lists them."""
    group = parser.getgroup("obelize-bench", "obelize migration benchmark")
    _round_options(group)
    _measurement_options(group)
    _comparison_options(group)


def _round_options(group: pytest.OptionGroup) -> None:
    """A round's and the fixtures pass's options."""
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
        "--bench-env-templates",
        metavar="DIR",
        help="keep template environments in DIR; several work roots may share it (default: <work>/env-templates)",
    )
    group.addoption(
        "--bench-template-bytecode",
        choices=("compile", "none"),
        default="compile",
        help="compile a template environment's modules once when it is built (compile), or leave every suite"
        " that imports them to compile them again (none: for a round run once on a machine then discarded)",
    )
    group.addoption(
        "--bench-repo-cache",
        metavar="DIR",
        help="keep bare repositories at DIR/<owner>/<name>.git and fetch from them; each pin's first checkout"
        " is kept at DIR/<owner>/<name>.pins/<sha> and copied in, not fetched, by later ones",
    )
    group.addoption(
        "--bench-unreachable",
        metavar="PINS.tsv",
        help="rows of the case file this machine cannot reach, with why: a tab-separated list with full_name, sha"
        " and state columns (a state other than packed is the reason); they are not run, the run records them,"
        " and a run of every other row is whole",
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


def _measurement_options(group: pytest.OptionGroup) -> None:
    """Gate 1's and the fix dry run's options."""
    group.addoption(
        OPTION_GATE1, action="store_true", help="Gate 1: obelize scan precision and recall over the labelled frame"
    )
    group.addoption(
        OPTION_DRYRUN,
        metavar="PACK",
        help="the fix dry run of PACK over --bench-frame: blocked, none, held, partial or complete",
    )
    group.addoption(
        OPTION_FRAME, metavar="FILE", help=f"the frame to measure (default for --bench-gate1: {DEFAULT_GATE1_FRAME})"
    )
    group.addoption(
        OPTION_GATE1_CASES,
        metavar="CASES.yaml",
        help="with --bench-gate1: scan the repository of every case of a case file instead of a frame and match"
        " its findings against the case's own key; published beside the sample's Gate 1",
    )


def _comparison_options(group: pytest.OptionGroup) -> None:
    """The comparison arm's options."""
    group.addoption(
        OPTION_COMPARE,
        metavar="ARM.yaml",
        help="the comparison arm: a coding agent (the arm file's command) against obelize on every dev case",
    )
    group.addoption(
        OPTION_COMPARE_REPEAT,
        type=int,
        default=0,
        metavar="N",
        help="with --bench-compare: run the agent a second time on the first N dev cases, in a fresh tree",
    )


__all__ = [
    "DEFAULT_GATE1_FRAME",
    "OPTION_COMPARE",
    "OPTION_COMPARE_REPEAT",
    "OPTION_DRYRUN",
    "OPTION_FIXTURES",
    "OPTION_FRAME",
    "OPTION_GATE1",
    "OPTION_GATE1_CASES",
    "OPTION_ROUND",
    "add_options",
]
