"""The results pages: generated from results/ alone, hostile evidence shown as text, kept current by
publication and summarize, and checked by ``docs --check`` and ``summarize --check``.

Each page is rendered to HTML with the site's own Markdown extensions (``mkdocs.yml``), so what is
checked is what a browser would be given; ``test_site_browser.py`` then opens it in one.
"""

from __future__ import annotations

import json
import re
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import markdown
import pytest
import yaml

from pytest_obelize_bench.report.site.case_page import marked_lines
from pytest_obelize_bench.report.site.escape import code, cut_lines, fenced, text
from tests.helpers.bench_cli import obelize_bench
from tests.helpers.project import PROJECT
from tests.helpers.site import DETAIL, HOSTILE_FILE, hostile_project


def render(page: str) -> str:
    """A page as the site renders it: the extensions of mkdocs.yml."""
    config = yaml.safe_load((PROJECT / "mkdocs.yml").read_text(encoding="utf-8"))
    names = [next(iter(e)) if isinstance(e, dict) else e for e in config["markdown_extensions"]]
    return str(markdown.markdown(page, extensions=names))


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hostile_project(tmp_path_factory.mktemp("site"))


def pages(project: Path) -> dict[str, str]:
    folder = project / "docs" / "results"
    return {p.relative_to(folder).as_posix(): p.read_text("utf-8") for p in folder.rglob("*.md")}


def test_publication_writes_the_pages_and_both_checks_hold_them(project: Path) -> None:
    written = pages(project)
    assert {"index.md", "round-2.md", "round-2/alpha__navamai.md", "round-2/zeta__app.md"} <= set(written)
    assert "[Round 2](round-2.md), published from run" in written["index.md"]
    assert '<a href="round-2/alpha__navamai.md">alpha__navamai</a>' in render(written["round-2.md"])
    assert (project / "docs" / "results" / "figures" / "round-2-headline.svg").is_file()
    assert obelize_bench("summarize", "--check", cwd=project)[0] == 0
    assert obelize_bench("docs", "--check", "--docs", "docs", cwd=project)[0] == 0


def test_an_edited_or_stray_page_fails_both_checks_and_summarize_rewrites_it(project: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "project"
    shutil.copytree(project, copy)
    page = copy / "docs" / "results" / "round-2" / "alpha__navamai.md"
    page.write_text(page.read_text("utf-8").replace("verified", "VERIFIED"), encoding="utf-8")
    (copy / "docs" / "results" / "stray.md").write_text("# stray\n", encoding="utf-8")
    code_, out = obelize_bench("summarize", "--check", cwd=copy)
    assert code_ == 1 and "the results pages differ (" in out and "2 in all" in out, out
    code_, out = obelize_bench("docs", "--check", "--docs", "docs", cwd=copy)
    assert code_ == 1
    assert f"{Path('docs/results/round-2/alpha__navamai.md')}: differs from a fresh render" in out
    assert f"{Path('docs/results/stray.md')}: not generated from results/" in out
    code_, out = obelize_bench("summarize", cwd=copy)
    assert code_ == 0 and "results pages: " in out and not (copy / "docs" / "results" / "stray.md").exists()
    assert obelize_bench("summarize", "--check", cwd=copy)[0] == 0


class _Elements(HTMLParser):
    """Every element of a page, with its attributes, as a browser's parser would see them."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, dict(attrs)))


def elements(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Elements()
    parser.feed(html)
    return parser.found


def test_nothing_hostile_reaches_the_html(project: Path) -> None:
    for name, page in pages(project).items():
        html = render(page)
        found = elements(html)
        assert not [tag for tag, _ in found if tag in ("script", "b", "iframe", "object")], name
        assert not [(tag, a) for tag, a in found if any(key.startswith("on") for key in a)], name
        images = [a.get("src") or "" for tag, a in found if tag == "img"]
        assert all(re.fullmatch(r"figures/[a-z0-9_-]+\.svg", src) for src in images), (name, images)
        links = [a.get("href") or "" for tag, a in found if tag == "a"]
        assert not [href for href in links if ":" in href and not href.startswith("#")], (name, links)
        assert "\x00" not in html and "\x07" not in html, name
        assert len(page) < 60_000, f"{name}: {len(page)} characters"


def test_the_case_page_shows_the_tier_the_rows_and_the_diff_with_its_key_row_marked(project: Path) -> None:
    page = pages(project)["round-2/alpha__navamai.md"]
    html = render(page)
    published = json.loads((project / "results" / "round-2" / "alpha__navamai.json").read_text("utf-8"))
    assert f"Tier <strong><code>{published['tier']}</code></strong>" in html
    assert re.search(r'<span class="hll"><span class="gd">-import google.generativeai as genai', html), html[:3000]
    assert html.count('class="hll"') == 1  # the key row's line, and nothing else
    assert "<td><code>app.py</code></td>" in html and ">migrated<" in html
    assert "&lt;script&gt;document.title=" in html  # the patch's script shows as text
    assert "[cut]" in page and "line(s) longer than 240 characters are cut" in page
    assert "The end of the suite's log before the patch:" in page and "3 passed" in html
    assert "FAILED test_app.py::test_&lt;script&gt;" in html  # a log's script, as text
    assert "Not reviewed yet" in page and ".venv/bin/obelize-bench review alpha__navamai --run round-2:" in page


def test_an_errored_case_shows_its_detail_as_text_cut(project: Path) -> None:
    page = pages(project)["round-2/zeta__app.md"]
    html = render(page)
    assert "The case errored at step <code>fix</code>: <code>obelize_failed</code> (tool)" in html
    assert "\ufffd" in html  # the NUL byte
    assert "[cut]" in html and "y" * 241 not in html  # 20,000 characters cut to one short line
    assert DETAIL[:20] not in page.replace("```", "") or "<script>" in page  # only inside the fence


def test_escape_turns_markup_into_text() -> None:
    assert text("<b>x</b> | `y` [z]") == "&#60;b&#62;x&#60;/b&#62; &#124; &#96;y&#96; &#91;z&#93;"
    for hostile in (HOSTILE_FILE, "[a](javascript:alert(1))", "``x``", "&lt;b&gt;"):
        for escaped, wrapper in ((text(hostile), "p"), (code(hostile), "code")):
            html = render(escaped)
            assert [tag for tag, _ in elements(html)] == ["p"] + (["code"] if wrapper == "code" else [])
            assert unescape(re.sub(r"</?(p|code)>", "", html)) == hostile  # shown as written
    assert text("a\x00b\u2028c\x1bd") == "a\ufffdb c\ufffdd"  # a line separator is a space
    lines, note = cut_lines("\n".join(["z" * 300] * 500))
    assert (
        len(lines) == 400
        and note == "the first 400 of its 500 lines are shown; 500 line(s) longer than 240 characters are cut"
    )
    assert fenced(["````", "x"], "diff", [2]) == ['`````diff hl_lines="2"', "````", "x", "`````"]


def test_marked_lines_follow_the_old_file_through_hunks_and_files() -> None:
    diff = [
        "--- a/one.py", "+++ b/one.py", "@@ -10,3 +10,3 @@", " ten", "-eleven", "+ELEVEN", " twelve",
        "--- a/two.py", "+++ b/two.py", "@@ -1,2 +1,1 @@", "-one", " two",
    ]  # fmt: skip
    assert marked_lines(diff, {("one.py", 11), ("one.py", 12), ("two.py", 1)}) == [5, 7, 11]
    assert marked_lines(diff, {("two.py", 11)}) == []


def test_each_decision_has_a_page_with_every_rule_it_checked(tmp_path: Path) -> None:
    from pytest_obelize_bench.report.site.pages import site_files
    from tests.helpers.promotion_runs import make_project, write_run

    project = make_project(tmp_path / "project")
    write_run(project, "20261201T100000Z-aaaaaa", {}, default="p", version="0.7.0")
    write_run(project, "20261201T110000Z-bbbbbb", {0: "v"}, default="p", version="0.8.0")
    obelize_bench(
        "gate", "--incumbent", "20261201T100000Z-aaaaaa", "--candidate", "20261201T110000Z-bbbbbb", cwd=project
    )
    (written,) = (project / "results" / "decisions").glob("*.json")
    document = json.loads(written.read_text("utf-8"))
    files = site_files(project / "results", project / "cases" / "cases.yaml")
    listing, page = str(files["decisions.md"]), str(files[f"decisions/{written.stem}.md"])
    assert f"[{written.stem}](decisions/{written.stem}.md)" in listing
    html = render(page)
    assert f"<strong><code>{document['decision']}</code></strong>" in html
    for reason in document["reasons"]:
        assert f"<td><code>{reason['rule']}</code></td>" in html
    assert html.count("<tr>") == len(document["reasons"]) + 1


def test_the_published_gate1_has_a_page_per_labelled_repository_with_its_rows() -> None:
    from pytest_obelize_bench.report.site.pages import site_files

    files = site_files(PROJECT / "results", PROJECT / "cases" / "cases.yaml")
    scan = json.loads((PROJECT / "results" / "gate1" / "scan.json").read_text("utf-8"))
    labelled = sorted(p.stem for p in (PROJECT / "cases" / "gate1" / "labels").glob("*.yaml"))
    assert sorted(name[6:-3] for name in files if name.startswith("gate1/")) == labelled
    assert all(f"(gate1/{slug}.md)" in str(files["gate1.md"]) for slug in labelled)
    from pytest_obelize_bench.gate1.scan_document import key_matches, load_gate1_inputs

    document, _, keys, _ = load_gate1_inputs(PROJECT / "results" / "gate1" / "scan.json", PROJECT / "cases" / "gate1")
    for name, match in key_matches(document, keys).items():
        page = str(files[f"gate1/{name.replace('/', '__')}.md"])
        assert match is not None and f"## Found and labelled ({match.true_positive})" in page
        assert f"## Labelled, not found ({match.missed})" in page
        assert f"## Found, not labelled (false positives) ({match.false_positive})" in page
        assert render(page).count("<tr>") == sum(
            n + 1 for n in (len(match.actionable.matched), len(match.actionable.missing),
                            len(match.actionable.unexpected), len(match.other.matched), len(match.other.missing),
                            len(match.other.unexpected), len(match.forbidden)) if n
        )  # fmt: skip
    assert scan["scanned"]


def test_each_compared_case_has_both_arms_side_by_side_as_its_summary_counts_them() -> None:
    from pytest_obelize_bench.comparison.block_text import scored_comparisons
    from pytest_obelize_bench.report.site.pages import site_files

    files = site_files(PROJECT / "results", PROJECT / "cases" / "cases.yaml")
    score = scored_comparisons(PROJECT / "results", PROJECT / "cases" / "cases.yaml")[1]
    record = score.record
    assert sorted(n[19:-3] for n in files if n.startswith("comparison-round-1/")) == sorted(record.cases)
    for case_id, case in record.cases.items():
        page = str(files[f"comparison-round-1/{case_id}.md"])
        assert f"(comparison-round-1/{case_id}.md)" in str(files["comparison-round-1.md"])
        cells = {row[0]: row[1:] for row in ([c.strip() for c in line.strip("| ").split(" | ")]
                                             for line in page.splitlines()) if len(row) == 3}  # fmt: skip
        ours, theirs = (next(one for one in score.scores[arm] if one.case == case_id)
                        for arm in ("obelize", score.agent))  # fmt: skip
        assert cells["files"] == [str(ours.files), str(theirs.files)] == [
            str(len(case.obelize_changes)), str(len(case.changes))
        ], case_id  # fmt: skip
        assert cells["cleared"] == [str(ours.cleared), str(theirs.cleared)], case_id
        measured = json.loads((PROJECT / "results" / "round-1" / f"{case_id}.json").read_text("utf-8"))["measurements"]
        compiles = measured["patch_compiles"]  # round 1's comparison record leaves obelize's to the round's record
        assert cells["runtime"][0] != "--" and cells["compiles"][0] == ("--" if compiles is None else str(compiles))
        assert f"obelize cleared {ours.cleared} of them, the general agent {theirs.cleared}." in page
        scan = [row for row in ([c.strip() for c in line.strip("| ").split(" | ")] for line in page.splitlines())
                if len(row) == 6 and row[0].startswith("<code>")]  # fmt: skip
        assert sum(int(row[2]) for row in scan) == ours.key_rows, case_id  # every key row, marked
        changed = {c.path for c in case.changes} | {c.path for c in case.obelize_changes}
        assert render(page).count("<tr>") >= 5 + len(changed)


def test_both_arms_diffs_show_as_text_with_the_key_rows_marked() -> None:
    import dataclasses

    from pytest_obelize_bench.casefile.cases import CallSite
    from pytest_obelize_bench.comparison.block_text import scored_comparisons
    from pytest_obelize_bench.report.site.comparison_page import comparison_case_page
    from tests.helpers.handbuilt import make_case
    from tests.helpers.site import SCRIPT

    score = scored_comparisons(PROJECT / "results", PROJECT / "cases" / "cases.yaml")[1]
    record = score.record
    case_id = sorted(record.cases)[0]
    ours = "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n-import google.generativeai\n+from google import genai\n"
    ours += f" {SCRIPT}\n"
    theirs = "--- a/app.py\n+++ b/app.py\n@@ -3,1 +3,1 @@\n-x = '````'\n+x = 1\n"
    case = record.cases[case_id].model_copy(update={"diffs": {"obelize": ours, "general_agent": theirs}})
    key = make_case(case_id)
    rows = [CallSite(path="app.py", line=n, kind="import", symbol="google.generativeai", label="auto") for n in (1, 3)]
    key = key.model_copy(update={"ground_truth": key.ground_truth.model_copy(update={"call_sites": rows})})
    with_diffs = dataclasses.replace(score, record=record.model_copy(update={"cases": {**record.cases, case_id: case}}))
    html = render(comparison_case_page(with_diffs, case_id, key))
    assert not [tag for tag, _ in elements(html) if tag in ("script", "b")]
    assert html.count('<span class="hll">') == 2  # obelize's removed import, the agent's removed line 3
    assert html.index("What obelize changed") < html.index("What the general agent changed")
    assert "&lt;script&gt;document.title=" in html
    assert "imported from upstream's round 1, which kept no diff" in render(comparison_case_page(score, case_id, key))
    ours_only = case.model_copy(update={"diffs": {"obelize": ours}, "changes": case.changes[:1]})
    harnessed = record.model_copy(update={"arm_file_sha256": "a" * 64, "cases": {**record.cases, case_id: ours_only}})
    page = comparison_case_page(dataclasses.replace(score, record=harnessed), case_id, key)
    said = "the repository names no licence" if case.changes else "it changed nothing"
    assert f"No diff is shown: {said}." in page and "What obelize changed" in page


def test_no_page_names_a_path_of_this_machine(project: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "project"
    shutil.copytree(project, copy)
    broken = copy / "results" / "round-2" / "runs" / "20261209T000000Z-ffffff"
    broken.mkdir()
    (broken / "run.json").write_text("{", encoding="utf-8")
    code_, out = obelize_bench("summarize", "--results", str((copy / "results").resolve()), cwd=copy)
    assert code_ == 0, out
    written = pages(copy)
    assert "not a run manifest" in written["round-2.md"]
    for name, page in written.items():
        for needle in (str(tmp_path), "/tmp/", str(Path.home())):
            assert needle not in page, (name, needle)


def test_each_round_page_holds_its_whole_section_of_the_results_document() -> None:
    """The round page calls itself the round's section of the results document: all of it, the
    error analysis included."""
    from pytest_obelize_bench.report.site.pages import site_files

    files = site_files(PROJECT / "results", PROJECT / "cases" / "cases.yaml")
    document = (PROJECT / "results" / "BENCHMARK_RESULTS.md").read_text("utf-8")
    sections = re.findall(r"^<!-- round-(\d+):begin[^\n]*\n(.*?)\n<!-- round-\1:end -->", document, re.M | re.S)
    assert sections
    for n, section in sections:
        if f"round-{n}.md" in files:
            assert section in str(files[f"round-{n}.md"]), n
    assert "#### Error analysis" in str(files["round-1.md"])


def test_each_round_page_reads_its_keys_from_the_case_file_the_round_was_run_from(tmp_path: Path) -> None:
    """As the results document does: a round whose publication names another case file is stated
    against that file's keys, not the project's."""
    import shutil

    from pytest_obelize_bench.report.site.pages import site_files

    shutil.copytree(PROJECT / "results", tmp_path / "results")
    shutil.copytree(PROJECT / "cases", tmp_path / "cases")
    data = yaml.safe_load((tmp_path / "cases" / "cases.yaml").read_text("utf-8"))
    note_path = tmp_path / "results" / "round-2" / "publication.json"
    note = json.loads(note_path.read_text("utf-8"))
    case_id = sorted(note["records"])[0]
    case = next(c for c in data["cases"] if c["id"] == case_id)
    case["ground_truth"]["call_sites"][0]["line"] = 9999
    (tmp_path / "cases" / "cases-other.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    note["case_file"]["path"] = "cases/cases-other.yaml"
    note_path.write_text(json.dumps(note), encoding="utf-8")
    files = site_files(tmp_path / "results", tmp_path / "cases" / "cases.yaml")
    assert "| 9999 |" in str(files[f"round-2/{case_id}.md"])
    assert "| 9999 |" not in str(files.get(f"round-1/{case_id}.md", ""))
