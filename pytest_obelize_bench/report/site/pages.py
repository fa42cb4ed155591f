"""``docs/results/``: the published results as pages of the documentation site.

Generated from ``results/`` alone (records, their graded facts and patches, runs, the measurement
documents, decisions, histories) and the keys and reviews of the case file each round was run from
(``records.runref.round_case_path``, as the results document reads it): an index, a page per round
(its block, a table of its cases, its runs), a page per case and round (``case_page.py``, from the
case's facts, ``report/case_facts.py``, which the results document and ``show`` read too), and a
page per measurement, decision list and history, each the results document's block with its
figures beside it. ``obelize-bench docs`` writes the folder whole (a file it would not write is
removed); ``docs --check`` and ``summarize --check`` fail when it differs from a fresh render.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_obelize_bench._util.markdown import table
from pytest_obelize_bench._util.safe_io import write_atomically
from pytest_obelize_bench.casefile.cases import CaseFile, load_case_file
from pytest_obelize_bench.comparison.block_text import comparison_blocks, comparison_rounds, scored_comparisons
from pytest_obelize_bench.gate1.scan_document import key_matches, load_gate1_inputs
from pytest_obelize_bench.promotion.decision_list import render_decisions
from pytest_obelize_bench.promotion.history_report import history_blocks
from pytest_obelize_bench.records.evidence import read_decision_documents
from pytest_obelize_bench.records.runs import list_runs
from pytest_obelize_bench.report.case_reading import round_case_facts
from pytest_obelize_bench.report.glance_sources import current_glance
from pytest_obelize_bench.report.measurement_blocks import measurement_blocks
from pytest_obelize_bench.report.round.round_files import (
    read_round_folder,
    round_case_files,
    round_outputs,
    rounds_on_disk,
)
from pytest_obelize_bench.report.site.case_page import case_page
from pytest_obelize_bench.report.site.comparison_page import comparison_case_page
from pytest_obelize_bench.report.site.escape import code, text

__all__ = ["SITE_FOLDER", "check_site", "check_site_beside", "site_files", "write_site", "write_site_beside"]

#: The folder under ``docs/`` the pages are written to; every file in it is generated.
SITE_FOLDER = "results"
_MARKER = re.compile(r"^<!-- .*-->$")


def _case_pages(results: Path, case_file: CaseFile, n: int) -> dict[str, str]:
    """A page per case of round ``n``, from its facts (``report/case_facts.py``)."""
    return {f"round-{n}/{case_id}.md": case_page(attempts)
            for case_id, attempts in round_case_facts(results, case_file, n).items()}  # fmt: skip


def _round_page(results: Path, case_file: CaseFile, n: int) -> tuple[str, str | None]:
    """The round's page and the run it was published from."""
    data = read_round_folder(results, case_file, n).data
    run = None if data.publication is None else str(data.publication["run"])
    block = round_outputs(results, case_file, data).block
    lines = [f"# Round {n}", "", "The round's section of the results document, then each case and each run.", ""]
    lines += [line for line in block.splitlines() if not _MARKER.match(line)]
    rows = []
    for case_id, record in sorted(data.records.items()):
        link = f"[{text(case_id)}](round-{n}/{case_id}.md)"
        rows.append([link, text(record.split or "control"), f"`{record.tier}`", text(record.measurements.unmigrated)])
    lines += ["", "## Cases", "", *table(["Case", "Split", "Tier", "Rows unmigrated"], ["---"] * 4, rows, str)]
    runs = []
    for found, manifest, problem in list_runs(results, n):
        if manifest is None:
            said = str(problem).replace(str(results), "results")  # a page never names this machine's paths
            runs.append([code(found.name), "--", text(said), ""])
            continue
        state = ", ".join(manifest.unfinished()) or ("imported" if manifest.kind == "imported" else "whole")
        runs.append([code(manifest.run), text(", ".join(manifest.tools_recorded) or "--"), text(state),
                     "published" if manifest.run == run else ""])  # fmt: skip
    if runs:
        lines += ["", "## Runs", "", *table(["Run", "Tool", "State", ""], ["---"] * 4, runs, str)]
    return "\n".join(lines) + "\n", run


def _title(block: str) -> str:
    """A measurement block's page title: ``gate1``, ``dryrun-<pack>``, ``comparison-round-N``, ``history-round-N``."""
    if block == "gate1":
        return "Gate 1"
    if block.startswith("gate1-"):
        return f"Gate 1, {block.removeprefix('gate1-')}"
    if block.startswith("dryrun-history-"):
        return f"History of releases, fix dry run {block.removeprefix('dryrun-history-').replace('__', '/', 1)}"
    if block.startswith("dryrun-"):
        return f"Fix dry run, {block.removeprefix('dryrun-').replace('__', '/', 1)}"
    kind, _, number = block.partition("-round-")
    return f"{'Comparison arm' if kind == 'comparison' else 'History of releases'}, round {number}"


def _block_page(title: str, block: str) -> str:
    body = [line for line in block.splitlines() if not _MARKER.match(line)]
    return "\n".join([f"# {title}", "", *body]) + "\n"


def _measurement_pages(results: Path, cases_path: Path, rounds: list[int]) -> dict[str, tuple[str, str]]:
    """Page name -> (title, page) of every measurement, decision list and history published."""
    blocks = {**measurement_blocks(results, cases_path.parent), **comparison_blocks(results, cases_path)}
    blocks.update(history_blocks(results, rounds)[0])
    pages = {}
    for name, block in sorted(blocks.items()):
        title = _title(name)
        pages[f"{name}.md"] = (title, _block_page(title, block))
    keys = load_case_file(cases_path).by_id() if comparison_rounds(results) else {}
    for n, score in scored_comparisons(results, cases_path).items():
        cases = []
        for case_id in sorted(score.record.cases):
            page = comparison_case_page(score, case_id, keys.get(case_id))
            pages[f"comparison-round-{n}/{case_id}.md"] = (case_id, page)
            cases.append(f"* [{text(case_id)}](comparison-round-{n}/{case_id}.md)")
        title, page = pages[f"comparison-round-{n}.md"]
        pages[f"comparison-round-{n}.md"] = (title, page + "\n## Each case, both arms\n\n" + "\n".join(cases) + "\n")
    if "gate1.md" in pages:
        repositories = _gate1_pages(results, cases_path)
        each = "\n".join(f"* [{text(title)}]({name})" for name, (title, _) in repositories.items())
        title, page = pages["gate1.md"]
        pages["gate1.md"] = (title, page + "\n## Each labelled repository\n\n" + each + "\n")
        pages.update(repositories)
    documents = read_decision_documents(results / "decisions")
    decisions = render_decisions([(p.name, d) for p, d in documents])
    if decisions is not None:
        listed = [f"* [{text(p.stem)}](decisions/{p.stem}.md)" for p, _ in documents]
        page = _block_page("Promotion decisions", decisions) + "\n## Each decision\n\n" + "\n".join(listed) + "\n"
        pages["decisions.md"] = ("Promotion decisions", page)
        for path, document in documents:
            pages[f"decisions/{path.stem}.md"] = (path.stem, _decision_page(path.stem, document))
    return pages


def _gate1_pages(results: Path, cases_path: Path) -> dict[str, tuple[str, str]]:
    """A page per labelled repository of the published scan: its findings against its key."""
    document, _, keys, _ = load_gate1_inputs(results / "gate1" / "scan.json", cases_path.parent / "gate1")
    pages = {}
    for name, match in key_matches(document, keys).items():
        slug = name.replace("/", "__")
        lines = [f"# Gate 1: {text(name)}", "", "[Back to Gate 1](../gate1.md).", ""]
        if match is None:
            lines.append("No usable scan of its pinned commit: it is not in the figures.")
        else:
            lines.append(
                f"Precision {match.precision.format()} over {match.findings} findings, recall "
                f"{match.recall.format()} over {match.labelled} labelled rows (actionable kinds)."
            )
            sections = [
                ("Found and labelled", match.actionable.matched), ("Labelled, not found", match.actionable.missing),
                ("Found, not labelled (false positives)", match.actionable.unexpected),
                ("Other kinds found and expected", match.other.matched), ("Other kinds expected, not found",
                match.other.missing), ("Other kinds found, not expected", match.other.unexpected),
                ("Reported where the key forbids it", match.forbidden),
            ]  # fmt: skip
            for title, rows in sections:
                shown = [[code(path), line, code(kind), code(symbol)] for path, line, kind, symbol in rows]
                lines += ["", f"## {title} ({len(rows)})", ""]
                if shown:
                    lines += table(["Path", "Line", "Kind", "Symbol"], ["---", "--:", "---", "---"], shown, str)
        pages[f"gate1/{slug}.md"] = (name, "\n".join(lines) + "\n")
    return pages


def _decision_page(stem: str, document: Mapping[str, Any]) -> str:
    """One decision document: its outcome, both runs, and every rule it checked with its figure,
    the value seen, the threshold and whether it held."""

    def run(side: str) -> str:
        identity = document.get(side) or {}
        return f"{code(identity.get('run_id'))} (obelize {text(identity.get('tool_version'))})"

    lines = [
        f"# Decision {text(stem)}",
        "",
        f"**`{text(document.get('decision'))}`** for the candidate {run('candidate')} against the incumbent "
        f"{run('incumbent')}, evaluated {text(document.get('evaluated_at'))} under the policy "
        f"{code(str(document.get('policy_sha256'))[:12])}. [All decisions](../decisions.md).",
        "",
    ]
    rows = [
        [code(r.get("rule")), "holds" if r.get("holds") else "**fails**", text(r.get("figure")),
         code(r.get("value"), 80), code(r.get("threshold"), 80), text(r.get("text"), 400)]
        for r in document.get("reasons") or [] if isinstance(r, Mapping)
    ]  # fmt: skip
    header = ["Rule", "", "Figure", "Value", "Threshold", "What it says"]
    return "\n".join([*lines, *table(header, ["---"] * 6, rows, str)]) + "\n"


def site_files(results: Path, cases_path: Path) -> dict[str, str | bytes]:
    """Every file of ``docs/results/``, by its path in that folder."""
    results, cases_path = Path(results), Path(cases_path)
    case_file = load_case_file(cases_path)
    rounds = [n for n in rounds_on_disk(results, case_file) if (results / f"round-{n}").is_dir()]
    # each round with the case file it was run from, as the results document reads it
    own = round_case_files(results, case_file, rounds)
    files: dict[str, str | bytes] = {}
    index = ["# Results", "", "Every page here is generated from `results/` by `obelize-bench docs`; edit the data,"]
    index += ["never a page.", ""]
    glance = current_glance(results, case_file)  # the document's first block, the site's first screen
    if glance is not None:
        index += [glance[0].rstrip("\n"), ""]
    index += ["## Rounds", ""]
    for n in rounds:
        page, run = _round_page(results, own[n], n)
        files[f"round-{n}.md"] = page
        files.update(_case_pages(results, own[n], n))
        index.append(f"* [Round {n}](round-{n}.md)" + (f", published from run {code(run)}" if run else ""))
    measured = _measurement_pages(results, cases_path, rounds)
    if measured:
        index += ["", "## Measurements, decisions and histories", ""]
        index += [f"* [{title}]({name})" for name, (title, _) in measured.items() if "/" not in name]
        files.update({name: page for name, (_, page) in measured.items()})
    files["index.md"] = "\n".join(index) + "\n"
    figures = results / "figures"
    for svg in sorted(figures.glob("*.svg")) if figures.is_dir() else []:
        if svg.is_file() and not svg.is_symlink():
            files[f"figures/{svg.name}"] = svg.read_bytes()
    return files


def _on_disk(folder: Path) -> dict[str, bytes]:
    if not folder.is_dir():
        return {}
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _bytes(content: str | bytes) -> bytes:
    return content.encode("utf-8") if isinstance(content, str) else content


def check_site(docs: Path, files: Mapping[str, str | bytes]) -> list[str]:
    """One line per file of ``docs/results/`` that differs from ``files``, is missing or is extra."""
    folder = Path(docs) / SITE_FOLDER
    present = _on_disk(folder)
    problems = [f"{folder / name}: differs from a fresh render" for name in sorted(set(files) & set(present))
                if present[name] != _bytes(files[name])]  # fmt: skip
    problems += [f"{folder / name}: missing" for name in sorted(set(files) - set(present))]
    problems += [f"{folder / name}: not generated from results/" for name in sorted(set(present) - set(files))]
    return problems


def write_site(docs: Path, files: Mapping[str, str | bytes]) -> int:
    """Make ``docs/results/`` exactly ``files``; how many files were written or removed."""
    folder = Path(docs) / SITE_FOLDER
    present = _on_disk(folder)
    changed = 0
    for name, content in files.items():
        if present.get(name) != _bytes(content):
            write_atomically(folder / name, _bytes(content))
            changed += 1
    for name in sorted(set(present) - set(files)):
        (folder / name).unlink()
        changed += 1
    return changed


def _docs_beside(results: Path) -> Path | None:
    """The documentation folder of the project that holds ``results``, when it has results pages."""
    docs = Path(results).resolve().parent / "docs"
    return docs if (docs / SITE_FOLDER).is_dir() else None


def write_site_beside(results: Path, cases_path: Path) -> list[str]:
    """Rewrite the project's results pages, if it has them (publication and ``summarize`` do)."""
    docs = _docs_beside(results)
    if docs is None:
        return []
    changed = write_site(docs, site_files(results, cases_path))
    return [f"results pages: {docs / SITE_FOLDER} ({changed} written or removed)"] if changed else []


def check_site_beside(results: Path, cases_path: Path) -> list[str]:
    """``check_site`` for the project's results pages, if it has them."""
    docs = _docs_beside(results)
    return [] if docs is None else check_site(docs, site_files(results, cases_path))
