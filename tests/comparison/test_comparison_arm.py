"""The arm file and the fixed prompt: one line per bad field, and a prompt only its paths vary."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_obelize_bench.comparison.arm import (
    ArmFileError,
    PromptError,
    load_template,
    parse_arm,
    read_arm,
    render_prompt,
)
from pytest_obelize_bench.comparison.trees import read_stamp
from tests.helpers.project import PROJECT

PROMPT = PROJECT / "cases" / "comparison" / "COMPARISON_PROMPT.md"


def _arm(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "command": ["agent", "--prompt-file", "{prompt}", "--cwd", "{tree}", "--meta={meta}"],
        "guide": {
            "file": "guide.html",
            "url": "https://ai.google.dev/gemini-api/docs/migrate",
            "fetched_at": "2026-09-22T07:20:07Z",
        },
        "time_limit_seconds": 1800,
        "env": ["GEMINI_API_KEY"],
    }
    data.update(overrides)
    return data


def test_a_good_arm_file_fills_its_template_and_defaults_to_no_network() -> None:
    arm = parse_arm(_arm(), "arm.yaml")
    assert arm.network is False and arm.name == "general_agent"
    argv = arm.argv(prompt=Path("/w/p.md"), tree=Path("/w/tree"), meta=Path("/w/meta"))
    assert argv == ["agent", "--prompt-file", "/w/p.md", "--cwd", "/w/tree", "--meta=/w/meta"]


@pytest.mark.parametrize(
    ("overrides", "line"),
    [
        ({"time_limit_seconds": 0}, "arm.yaml: time_limit_seconds: Input should be greater than 0"),
        ({"command": ["agent", "{tree}"]}, "arm.yaml: command: the template never passes {prompt}"),
        ({"command": ["agent", "{prompt}", "{repo}"]}, "arm.yaml: command: unknown placeholder {repo}"),
        ({"env": ["HOME"]}, "arm.yaml: env: HOME is the harness's to set for every step"),
        ({"env": ["A B"]}, "arm.yaml: env: 'A B' is not one variable's name"),
        ({"network": "maybe"}, "arm.yaml: network: Input should be a valid boolean"),
        ({"name": "obelize"}, "arm.yaml: name: 'obelize' names the tool or the untouched tree, not an agent"),
        ({"guide": {"file": "g", "url": "ftp://x", "fetched_at": "2026-09-22T07:20:07Z"}}, "arm.yaml: guide.url: "),
        ({"read_only": ["relative/path"]}, "arm.yaml: read_only: 'relative/path' is not an absolute path"),
        ({"shell": True}, "arm.yaml: shell: is not a known field"),
    ],
)
def test_a_bad_arm_file_gets_one_line_naming_the_field(overrides: dict[str, Any], line: str) -> None:
    with pytest.raises(ArmFileError) as caught:
        parse_arm(_arm(**overrides), "arm.yaml")
    assert str(caught.value).startswith(line) and "\n" not in str(caught.value)


def test_reading_an_arm_file_records_its_digest_and_its_guides(tmp_path: Path) -> None:
    (tmp_path / "guide.html").write_bytes(b"<html>guide</html>")
    path = tmp_path / "arm.yaml"
    path.write_text(yaml.safe_dump(_arm()), encoding="utf-8")
    _, arm_sha, guide, guide_sha = read_arm(path)
    assert arm_sha == hashlib.sha256(path.read_bytes()).hexdigest()
    assert guide == (tmp_path / "guide.html").resolve()
    assert guide_sha == hashlib.sha256(b"<html>guide</html>").hexdigest()
    (tmp_path / "guide.html").unlink()
    with pytest.raises(ArmFileError, match=r"arm.yaml: guide.file: "):
        read_arm(path)


def test_the_prompt_is_the_template_with_three_paths_and_nothing_else() -> None:
    template = load_template(PROMPT)
    assert not template.startswith("<!--") and template.startswith("# Migrating a project")
    prompt = render_prompt(
        template, tree=Path("/t/ab12/tree"), guide=Path("/t/ab12/given/guide.md"), meta=Path("/t/ab12/meta")
    )
    assert "{{" not in prompt and "/t/ab12/tree" in prompt and "date -u +%s > /t/ab12/meta/started" in prompt
    assert prompt.count("/t/ab12/") == sum(template.count(slot) for slot in ("{{TREE}}", "{{GUIDE}}", "{{META}}"))


def test_a_path_that_would_change_the_prompt_beyond_its_slot_is_refused() -> None:
    template = load_template(PROMPT)
    with pytest.raises(PromptError, match="cannot be put into the prompt"):
        render_prompt(template, tree=Path("/t/{{META}}"), guide=Path("/g"), meta=Path("/m"))
    # A path that is also ordinary prompt text would be read back as a slot: refused.
    with pytest.raises(PromptError, match="differs from the template"):
        render_prompt(template, tree=Path("the"), guide=Path("/g"), meta=Path("/m"))


def test_a_template_without_a_slot_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.md"
    path.write_text("<!-- note -->\nEdit {{TREE}} with {{GUIDE}}.\n", encoding="utf-8")
    with pytest.raises(PromptError, match=r"has no \{\{META\}\} slot"):
        load_template(path)


def test_a_stamp_is_a_unix_time_or_a_reason(tmp_path: Path) -> None:
    assert read_stamp(tmp_path / "started") == "no stamp was written"
    (tmp_path / "started").write_text("1790062157\n")
    assert read_stamp(tmp_path / "started") == 1790062157
    (tmp_path / "finished").write_text("yesterday")
    assert read_stamp(tmp_path / "finished") == "the stamp 'yesterday' is not a Unix time"
    (tmp_path / "link").symlink_to(tmp_path / "started")
    assert read_stamp(tmp_path / "link") == "the stamp is not a short ASCII file"
