"""The results document's block and figure for one pack's history of releases, from its history alone."""

from __future__ import annotations

from typing import Any

from pytest_obelize_bench._util.charts import RateChart, RatePoint, figures_section
from pytest_obelize_bench._util.markdown import cell, plain, table
from pytest_obelize_bench._util.stats import Rate
from pytest_obelize_bench.dryrun.outcomes import OUTCOMES, pack_slug
from pytest_obelize_bench.dryrun.release_history import FrameHistory, FrameRelease, FrameStep

__all__ = ["frame_history_block", "frame_history_block_name", "frame_history_chart"]

#: A step lists at most this many changed repositories by name in the block (history.json has all).
NAMED_CHANGES = 40


def frame_history_block_name(pack: str) -> str:
    return f"dryrun-history-{pack_slug(pack)}"


def _release_row(release: FrameRelease) -> list[Any]:
    if release.state == "pack_absent":
        return [plain(release.label), "pack absent", *["--"] * len(OUTCOMES), "--", plain(release.run_at)]
    cells = []
    for name in OUTCOMES:
        share = Rate.from_dict(release.outcomes[name])
        cells.append(f"{share.k} ({share.format()})")
    errors = len(release.errors)
    return [plain(release.label), str(release.with_outcome), *cells, str(errors), plain(release.run_at)]


def _step_line(step: FrameStep) -> str:
    if step.note is not None:
        return f"* **{plain(step.after)}** against {plain(step.before)}: {plain(step.note)}."
    if not step.changed:
        moved = "no repository changed outcome"
    else:
        shown = [f"{plain(c.repository)} ({c.before} -> {c.after})" for c in step.changed[:NAMED_CHANGES]]
        more = len(step.changed) - NAMED_CHANGES
        moved = f"{len(step.changed)} changed: " + ", ".join(shown) + (f" and {more} more" if more > 0 else "")
    apart = "" if step.complete is None else f"; `complete` share: {step.complete['verdict']}"
    return f"* **{plain(step.after)}** against {plain(step.before)}: {moved}{apart}."


def frame_history_block(history: FrameHistory) -> str:
    """The block (markers are the caller's)."""
    slug = pack_slug(history.pack)
    lines = [
        f"### History of obelize releases, fix dry run `{history.pack}`",
        "",
        f"Written by `obelize-bench history --frame {history.pack}` from each release's dry run of the frame",
        f"{plain(cell(history.frame))} ({history.repositories} repositories at their pins), kept in "
        f"`results/dryrun/{slug}/releases/`. Shares are of the repositories with an outcome, each",
        "repository one unit (95% Wilson); the frame describes these repositories only (its draw rule and",
        "biases are in the pack's dry-run block). A release that does not ship the pack is listed as such.",
        "",
    ]
    header = ["Release", "With an outcome", *[f"`{name}`" for name in OUTCOMES], "Could not run", "Run at"]
    rows = [_release_row(release) for release in history.releases]
    lines += table(header, ["---", "--:", *["---"] * len(OUTCOMES), "--:", "---"], rows)
    errored = [(r.label, name, error) for r in history.releases for name, error in sorted(r.errors.items())]
    if errored:
        lines += ["", "Repositories a release could not run:", ""]
        lines += [f"* obelize {plain(label)}, {plain(name)}: {plain(error)}" for label, name, error in errored]
    if history.steps:
        lines += [
            "",
            "Each release against the one before, by repository; whether the share planned `complete` moved is",
            f"the paired sign test over the repositories with an outcome under both (alpha {history.alpha:g}, "
            f"at least {history.min_n}).",
            "",
        ]
        lines += [_step_line(step) for step in history.steps]
    if history.left_out:
        lines += ["", "Dry runs left out:", ""]
        lines += [f"* {plain(item.release)}: {plain(item.reason)}" for item in history.left_out]
    chart = frame_history_chart(history)
    lines += figures_section([chart] if chart is not None else [], heading="#### Figure")
    return "\n".join(lines) + "\n"


def frame_history_chart(history: FrameHistory) -> RateChart | None:
    """Each outcome's share per release, oldest first; a release without the pack has no marks."""
    measured = [release for release in history.releases if release.state == "measured"]
    if not measured:
        return None
    points = [
        RatePoint(release.label, name, Rate.from_dict(release.outcomes[name]))
        for release in measured
        for name in ("complete", "partial", "held", "blocked")
    ]
    absent = [release.label for release in history.releases if release.state == "pack_absent"]
    caption = (
        "Share of the frame's repositories whose plan is complete, partial, held or blocked, per obelize release "
        "(95% Wilson, each repository one unit; n = the repositories with an outcome)"
        + (f"; not shipped in {', '.join(absent)}" if absent else "")
    )
    return RateChart(
        file_name=f"dryrun-{pack_slug(history.pack)}-history.svg",
        title=f"Fix dry run {history.pack}: obelize releases",
        caption=caption,
        points=tuple(points),
    )
