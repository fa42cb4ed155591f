"""README is a front door: short, and its findings are the published ones."""

from __future__ import annotations

import re

from tests.helpers.project import PROJECT

README = (PROJECT / "README.md").read_text(encoding="utf-8")
DOCUMENT = (PROJECT / "results" / "BENCHMARK_RESULTS.md").read_text(encoding="utf-8")


def test_readme_is_at_most_a_thousand_words() -> None:
    assert len(README.split()) <= 1000


def test_every_interval_readme_quotes_is_in_the_published_glance() -> None:
    glance = DOCUMENT.split("<!-- glance:begin")[1].split("<!-- glance:end")[0]
    quoted = re.findall(r"\d+\.\d%, \d+\.\d%\]", README.split("## What the benchmark has found")[1].split("## ")[0])
    assert quoted, "the findings quote no interval"
    for interval in quoted:
        assert interval in glance, interval
