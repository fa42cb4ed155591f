"""The results pages in a real browser: the project's site built with its own mkdocs.yml from a
round whose evidence is hostile, then opened in headless Chromium (Debian's ``chromium``, which
``.ci/run`` installs when it is missing).

The DOM is read after the page's scripts ran (``--dump-dom`` with a virtual time budget): the
tier, the figure and the highlighted diff are there, and no script from page content ran (each
hostile string would retitle the page ``PWNED`` or mark its body). Screenshots of the round page
and the case pages are the test's output, in its temporary folder, named in its JUnit properties.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.site import hostile_project

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (.ci/run installs Debian's)"),
]


def _chromium(*args: str) -> str:
    assert CHROMIUM is not None
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--virtual-time-budget=4000",
         *args],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = hostile_project(tmp_path_factory.mktemp("browser"))
    built = project.parent / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(project / "mkdocs.yml"),
         "--site-dir", str(built)],
        capture_output=True, text=True, timeout=300, check=False, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return built


PAGES = {
    "index": "results/index.html",
    "round": "results/round-2/index.html",
    "case": "results/round-2/alpha__navamai/index.html",
    "errored": "results/round-2/zeta__app/index.html",
    "history": "results/dryrun-history-openai__openai-0-to-1/index.html",
}


@pytest.mark.parametrize("page", sorted(PAGES))
def test_no_script_from_page_content_runs(site: Path, page: str) -> None:
    dom = _chromium("--dump-dom", (site / PAGES[page]).as_uri())
    assert "<title>" in dom and "PWNED" not in dom.split("</title>")[0], dom[:500]
    assert "data-pwned" not in dom.replace("data-pwned&#39;", "").replace("'data-pwned'", "")
    assert "<body" in dom and ("fix dry run" if page == "history" else "round 2") in dom.lower()


def test_the_round_page_shows_its_tiers_and_figure(site: Path) -> None:
    dom = _chromium("--dump-dom", (site / PAGES["round"]).as_uri())
    assert "Outcome tiers" in dom and 'href="alpha__navamai/"' in dom
    assert 'src="../figures/round-2-headline.svg"' in dom
    assert (site / "results" / "figures" / "round-2-headline.svg").read_bytes().lstrip().startswith((b"<?xml", b"<svg"))


def test_the_results_index_opens_with_the_glance_and_its_figure(site: Path) -> None:
    dom = _chromium("--dump-dom", (site / PAGES["index"]).as_uri())
    assert dom.index("At a glance") < dom.index("Rounds")
    assert "Round 2: <code>verified_success</code>" in dom and 'src="figures/at-a-glance.svg"' in dom
    assert (site / "results" / "figures" / "at-a-glance.svg").read_bytes().lstrip().startswith((b"<?xml", b"<svg"))


def test_a_packs_history_of_releases_names_each_change_and_draws_its_figure(site: Path) -> None:
    dom = _chromium("--dump-dom", (site / PAGES["history"]).as_uri())
    assert "History of releases, fix dry run openai/openai-0-to-1" in dom
    assert "complete -&gt; error" in dom and "&lt;script&gt;document.title" in dom  # the name, as text
    assert 'src="../figures/dryrun-openai__openai-0-to-1-history.svg"' in dom
    figure = site / "results" / "figures" / "dryrun-openai__openai-0-to-1-history.svg"
    assert figure.read_bytes().lstrip().startswith((b"<?xml", b"<svg"))


def test_the_case_page_shows_the_tier_and_the_highlighted_diff(site: Path) -> None:
    dom = _chromium("--dump-dom", (site / PAGES["case"]).as_uri())
    assert "<strong><code>" in dom and "Key rows" in dom
    assert dom.count('<span class="hll">') == 1 and "-import google.generativeai as genai" in dom
    assert "&lt;script&gt;document.title='PWNED'&lt;/script&gt;" in dom  # the patch's script, as text


def test_screenshots_are_the_test_output(
    site: Path, tmp_path: Path, record_property: Callable[[str, object], None]
) -> None:
    shots = tmp_path / "screenshots"
    shots.mkdir()
    for name, page in PAGES.items():
        _chromium(f"--screenshot={shots / name}.png", "--window-size=1280,1800", (site / page).as_uri())
        assert (shots / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (shots / f"{name}.png").stat().st_size > 20_000  # a rendered page, not a blank one
    record_property("screenshots", str(shots))
