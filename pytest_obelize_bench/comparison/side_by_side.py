"""The comparison block of the results document, rendered from the scores alone; pure."""

from __future__ import annotations

from pytest_obelize_bench._util.markdown import table
from pytest_obelize_bench._util.told_apart import TEST_NAME, told_apart
from pytest_obelize_bench.casefile.promotion_policy import Policy
from pytest_obelize_bench.comparison.assemble import ComparisonScore
from pytest_obelize_bench.comparison.rows import OBELIZE
from pytest_obelize_bench.comparison.score import ArmCase, case_accuracy
from pytest_obelize_bench.grading.record import TIERS


def block_name(n: int) -> str:
    return f"comparison-round-{n}"


def seconds_text(value: float | None) -> str | None:
    """A runtime as the block shows it: seconds to one place, minutes from two minutes up."""
    if value is None:
        return None
    if value >= 120:
        return f"{value / 60:.1f} min"
    return f"{value:.1f} s"


def _header(score: ComparisonScore) -> list[str]:
    record = score.record
    guide = record.guide
    digest = guide.sha256 or guide.sha256_text
    which = "snapshot" if guide.sha256 else "text rendering"
    lines = [
        f"### Comparison arm, round {record.round}",
        "",
        f"A coding agent (`{score.agent}`) and obelize, each on its own blind copy of every dev-split case of "
        f"round {record.round} (n = {len(record.cases)} cases, dev split; the holdout is never shown to an agent), "
        "scored by one instrument: `obelize scan` over the untouched tree and over each arm's tree, key rows "
        "matched on (path, kind, symbol), the key's `dynamic` as the scanner's `text_mention`.",
        "",
        f"* Guide snapshot: <{guide.url}>, fetched {guide.fetched_at}, sha256 ({which}) `{digest}`",
        f"* Prompt digest: {_code(record.prompt_sha256, 'not recorded (round 1 named none)')}",
        f"* Arm file digest: {_code(record.arm_file_sha256, 'not recorded')}",
        f"* Installs resolved as of: {_code(record.exclude_newer, 'not recorded (round 1 named none)')}",
        f"* Prepared at: {record.prepared_at}",
    ]
    if not score.reviewed:
        lines.append("* No review file: `patch_correct` is null for every case and no edit is rejected.")
    return lines


def _code(value: str | None, otherwise: str) -> str:
    return f"`{value}`" if value else otherwise


def _side_by_side(score: ComparisonScore) -> list[str]:
    rows = []
    for arm in (score.agent, OBELIZE):
        t = score.totals[arm]
        rows.append(
            [
                f"`{arm}`",
                t.cases,
                f"{t.verified.k} of {t.verified.n}: {t.verified.format()}",
                t.ceiling_open,
                t.key_rows,
                t.cleared,
                t.added,
                f"{t.accuracy.counted('rows', 'repositories')}: {t.accuracy.format()}",
                t.corrections,
                seconds_text(t.runtime_total),
                seconds_text(t.runtime_median),
            ]
        )
    header = [
        "arm",
        "cases",
        "`verified_success`",
        "ceiling open",
        "key rows",
        "rows migrated",
        "legacy added",
        "accuracy",
        "corrections left",
        "runtime, total",
        "runtime, median per case",
    ]
    return [
        "#### Both arms side by side",
        "",
        *table(header, ["---", *["---:"] * (len(header) - 1)], rows),
        "",
        "Accuracy is key rows cleared over key rows plus legacy usage the arm added. Its n is rows, but rows sit "
        "in repositories (one case each) and a rule that fails on a repository fails on its rows together, so "
        "its 95% interval is by repository: Wilson's at the effective n of the ratio estimator (Kish design "
        "effect), not Wilson's over rows, which would be about half as wide. Corrections are key rows still "
        "legacy plus edits the review rejected. Runtime is one "
        "pass: obelize's `runtime_seconds`, the agent's two stamps; neither includes fetching, venvs or suites. "
        "`ceiling open` counts the cases no key-level cap holds below `verified_success` for that arm: no test "
        "command caps any arm, a manual or flagged row caps only the rules.",
    ]


def _paired(score: ComparisonScore, policy: Policy) -> list[str]:
    """The arms told apart by case, on each case's accuracy: the one test every comparison uses."""
    agent, ours = score.scores[score.agent], score.scores[OBELIZE]
    apart = told_apart(
        [case_accuracy(one) for one in ours], [case_accuracy(one) for one in agent],
        alpha=policy.alpha, min_n=policy.min_n,
    )  # fmt: skip
    return [
        "#### Told apart, by case",
        "",
        f"Each case's accuracy under both arms, paired: `{score.agent}` higher on {apart.second_higher} cases, "
        f"obelize higher on {apart.first_higher}, the same on {apart.same} (n = {apart.cases} cases). "
        f"{TEST_NAME[0].upper()}{TEST_NAME[1:]}: p = {apart.p:.4f}; {apart.verdict()} (the promotion policy's "
        f"alpha and min_n, as every comparison here). Mean per-case difference, `{score.agent}` minus obelize: "
        f"{apart.difference_text()} (percentile bootstrap over cases).",
    ]


def _tiers(score: ComparisonScore) -> list[str]:
    rows = [[f"`{tier}`", *(score.totals[arm].tiers.get(tier, 0) for arm in (score.agent, OBELIZE))] for tier in TIERS]
    return [
        "#### Tiers",
        "",
        "The round's ladder without `false_positive` and `missed_call_site`, which read obelize's findings "
        "document. `patch_correct` comes from the review file.",
        "",
        *table(["tier", f"`{score.agent}`", f"`{OBELIZE}`"], ["---", "---:", "---:"], rows),
    ]


#: The block's per-case columns, whose cells ``case_cells`` gives; a case's page shows the same.
CASE_COLUMNS = ("case", "arm", "key rows", "rows seen", "cleared", "left", "corrections", "files",
                "files off the key", "runtime", "tier", "ceiling")  # fmt: skip


def case_cells(arm: str, one: ArmCase) -> list[object]:
    """One arm's row of the per-case table, a cell per ``CASE_COLUMNS``."""
    tier = f"`{one.tier}`" + (f" ({one.error})" if one.error else "")
    return [
        one.case,
        f"`{arm}`",
        one.key_rows,
        one.seen,
        one.cleared,
        one.left,
        one.corrections,
        one.files,
        one.files_off_key,
        seconds_text(one.runtime_seconds),
        tier,
        one.ceiling or "`verified_success`",
    ]


def _per_case(score: ComparisonScore) -> list[str]:
    rows = []
    for index in range(len(score.scores[OBELIZE])):
        for arm in (score.agent, OBELIZE):
            rows.append(case_cells(arm, score.scores[arm][index]))
    header = list(CASE_COLUMNS)
    return [
        "#### Every case",
        "",
        "`rows seen` are the key rows the scan reports on the untouched tree; a row it misses is credited to "
        "neither arm and stays in `left`.",
        "",
        *table(header, ["---", "---", *["---:"] * 8, "---", "---"], rows),
    ]


def _calibration(score: ComparisonScore) -> list[str]:
    agree = [one for one in score.calibration if one.agrees is True]
    differ = [one for one in score.calibration if one.agrees is False]
    unknown = [one for one in score.calibration if one.agrees is None]
    lines = [
        "#### Obelize's calibration",
        "",
        "Scoring the agent by scan is licensed by obelize's scan-cleared rows equalling what its plan and "
        f"withheld list say it migrated, case by case: they agree on {len(agree)} of {len(score.calibration)} cases.",
    ]
    if unknown:
        lines.append(f"No plan count for {', '.join(one.case for one in unknown)}.")
    if differ:
        lines += [
            "",
            "**Flagged: the scan and the plan disagree.**",
            "",
            *table(
                ["case", "scan-cleared", "plan migrated"],
                ["---", "---:", "---:"],
                [[one.case, one.scan_cleared, one.plan_migrated] for one in differ],
            ),
        ]
    return lines


def _repeats(score: ComparisonScore) -> list[str]:
    if not score.repeats:
        return []
    rows = [
        [
            one.case,
            f"{one.files[0]} / {one.files[1]}",
            f"{one.lines[0]} / {one.lines[1]}",
            f"{one.cleared[0]} / {one.cleared[1]}",
        ]
        for one in score.repeats
    ]
    return [
        "",
        "#### Repeatability",
        "",
        f"{len(score.repeats)} cases run a second time by the agent from the same bytes in a fresh tree "
        "(first / second run).",
        "",
        *table(["case", "files touched", "lines changed", "rows cleared"], ["---", "---:", "---:", "---:"], rows),
    ]


def render_comparison_block(score: ComparisonScore, policy: Policy) -> str:
    """The block; ``policy`` gives the alpha and min_n the arms are told apart at."""
    parts = [
        *_header(score),
        "",
        *_side_by_side(score),
        "",
        *_paired(score, policy),
        "",
        *_tiers(score),
        "",
        *_per_case(score),
        "",
        *_calibration(score),
        *_repeats(score),
    ]
    return "\n".join(parts) + "\n"


__all__ = ["CASE_COLUMNS", "block_name", "case_cells", "render_comparison_block", "seconds_text"]
