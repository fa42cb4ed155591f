"""Collection through the real plugin: one item per case, selection, and bad case files."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import casefile


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    casefile.write(pytester.path / "cases" / "cases.yaml", casefile.standard())
    pytester.makepyfile(test_unit="def test_unit():\n    assert True\n")
    return pytester


def collected(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if "::" in line]


def test_collect_only_lists_one_item_per_row_sorted(project: pytest.Pytester) -> None:
    result = project.runpytest("--bench-round=2", "--collect-only", "-q")
    assert result.ret == 0
    assert collected(result) == [
        "cases/cases.yaml::alpha__navamai",
        "cases/cases.yaml::beta__tested",
        "cases/cases.yaml::gamma__migrated",
        "cases/cases.yaml::zeta__app",
    ]


def test_plain_pytest_collects_only_the_projects_tests(project: pytest.Pytester) -> None:
    result = project.runpytest("--collect-only", "-q")
    assert collected(result) == ["test_unit.py::test_unit"]


def test_a_round_never_collects_unit_tests_even_when_named(project: pytest.Pytester) -> None:
    result = project.runpytest("--bench-round=2", "--collect-only", "-q", "test_unit.py")
    assert "test_unit.py::test_unit" not in result.outlines
    assert len(collected(result)) == 4


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["-k", "navamai"], ["cases/cases.yaml::alpha__navamai"]),
        (["-m", "holdout"], ["cases/cases.yaml::zeta__app"]),
        (["-m", "control"], ["cases/cases.yaml::gamma__migrated"]),
        (["-m", "has_tests"], ["cases/cases.yaml::beta__tested"]),
        (["-m", "dev and not control"], ["cases/cases.yaml::alpha__navamai", "cases/cases.yaml::beta__tested"]),
        (["--bench-split=holdout"], ["cases/cases.yaml::zeta__app"]),
        (["--bench-split=dev"], ["cases/cases.yaml::alpha__navamai", "cases/cases.yaml::beta__tested"]),
    ],
)
def test_selection(project: pytest.Pytester, args: list[str], expected: list[str]) -> None:
    result = project.runpytest("--bench-round=2", "--collect-only", "-q", "--strict-markers", *args)
    assert collected(result) == expected


def test_another_case_file(project: pytest.Pytester) -> None:
    casefile.write(project.path / "other.yaml", casefile.case_file([casefile.case_row("solo", "repo")]))
    result = project.runpytest("--bench-round=2", "--bench-cases=other.yaml", "--collect-only", "-q")
    assert collected(result) == ["other.yaml::solo__repo"]


def test_round_number_must_match_the_file(project: pytest.Pytester) -> None:
    result = project.runpytest("--bench-round=3", "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*round: the file is round 2, but --bench-round=3 was asked for*"])


def test_retired_case_is_kept_and_skipped_with_its_reason(project: pytest.Pytester) -> None:
    data = casefile.standard()
    data["cases"][0]["retired"] = {"reason": "the repository was deleted", "round": 2}
    casefile.write(project.path / "cases" / "cases.yaml", data)
    result = project.runpytest("--bench-round=2", "-rs", "-k", "zeta", "--bench-allow-dirty")
    result.stdout.fnmatch_lines(["*retired in round 2: the repository was deleted*"])


def _broken(pytester: pytest.Pytester, mutate: object) -> pytest.RunResult:
    data = casefile.standard()
    mutate(data)  # type: ignore[operator]
    casefile.write(pytester.path / "cases" / "cases.yaml", data)
    return pytester.runpytest("--bench-round=2", "--collect-only", "-q")


def _case(data: dict[str, Any], index: int = 1) -> dict[str, Any]:
    case: dict[str, Any] = data["cases"][index]
    return case


BAD_FILES = {
    "inexact pin": (
        lambda d: _case(d).update(from_version=">=0.8"),
        "case alpha__navamai: from_version: expected an exact X.Y.Z version, got '>=0.8'",
    ),
    "short sha": (
        lambda d: _case(d).update(sha="abc123"),
        "case alpha__navamai: sha: expected a full 40-hex lowercase commit SHA, got 'abc123'",
    ),
    "bare interpreter": (
        lambda d: _case(d).update(python="3.10"),
        "case alpha__navamai: python: expected a full uv interpreter key like "
        "cpython-3.12.9-macos-aarch64-none, got '3.10'",
    ),
    "bad split": (
        lambda d: _case(d).update(split="train"),
        "case alpha__navamai: split: expected dev or holdout, got 'train'",
    ),
    "pattern key": (
        lambda d: _case(d).update(pattern_key=["google.generativeai", "google.generativeai.configure"]),
        "case alpha__navamai: pattern_key: expected ['google.generativeai'], "
        "got ['google.generativeai', 'google.generativeai.configure']",
    ),
    "three per owner": (
        lambda d: d["cases"].extend([casefile.case_row("alpha", "two"), casefile.case_row("alpha", "three")]),
        "owner alpha: owner: expected at most 2 cases, found 3",
    ),
    "duplicate id": (
        lambda d: d["cases"].append(casefile.case_row("alpha", "navamai")),
        "case alpha__navamai: id: expected unique ids, found 2 rows",
    ),
    "manual without why": (
        lambda d: _case(d)["ground_truth"]["call_sites"][0].update(label="manual"),
        "case alpha__navamai: ground_truth.call_sites.0.why: a manual row (app.py:1) needs a why",
    ),
    "files_read": (
        lambda d: _case(d)["ground_truth"].update(files_read=["other.py"]),
        "case alpha__navamai: ground_truth.files_read: expected to list app.py, which holds a call site",
    ),
    "coverage without command": (
        lambda d: _case(d)["ground_truth"].update(tests_cover_change=True),
        "case alpha__navamai: ground_truth.tests_cover_change: true needs a test_cmd",
    ),
    "must_not_report without reason": (
        lambda d: _case(d)["ground_truth"].update(must_not_report=[{"path": "app.py", "line": 3, "why": " "}]),
        "case alpha__navamai: ground_truth.must_not_report.0.why: expected a reason",
    ),
    "control shape": (
        lambda d: d["controls"][0].update(control="looks-fine"),
        "control gamma__migrated: control: expected one of already-migrated, vertex-generative-models, "
        "vertex-preview, docs-mention, got 'looks-fine'",
    ),
    "retired without reason": (
        lambda d: _case(d).update(retired={"reason": "", "round": 2}),
        "case alpha__navamai: retired.reason: String should have at least 1 character (got '')",
    ),
    "missing field": (
        lambda d: _case(d).pop("sha"),
        "case alpha__navamai: sha: a value is required",
    ),
    "wrong type": (
        lambda d: _case(d)["ground_truth"]["call_sites"][0].update(line="one"),
        "case alpha__navamai: ground_truth.call_sites.0.line: Input should be a valid integer (got 'one')",
    ),
    "unknown kind": (
        lambda d: _case(d)["ground_truth"]["call_sites"][0].update(kind="text_mention"),
        "case alpha__navamai: ground_truth.call_sites.0.kind: Input should be "
        "'import', 'call', 'method_call', 'attribute' or 'dynamic' (got 'text_mention')",
    ),
    "unknown field": (
        lambda d: _case(d).update(sah="typo"),
        "case alpha__navamai: sah: is not a known field",
    ),
    "boolean for an integer": (
        lambda d: _case(d)["ground_truth"]["call_sites"][0].update(line=True),
        "case alpha__navamai: ground_truth.call_sites.0.line: Input should be a valid integer (got True)",
    ),
    "boolean for a string": (
        lambda d: _case(d).update(license=True),
        "case alpha__navamai: license: Input should be a valid string (got True)",
    ),
    "sha with a trailing newline": (
        lambda d: _case(d).update(sha=casefile.SHA + "\n"),
        f"case alpha__navamai: sha: expected a full 40-hex lowercase commit SHA, got '{casefile.SHA}\\n'",
    ),
    "version with a trailing space": (
        lambda d: _case(d).update(to_version="2.24.0 "),
        "case alpha__navamai: to_version: expected an exact X.Y.Z version, got '2.24.0 '",
    ),
    "key with a trailing newline": (
        lambda d: _case(d).update(python="cpython-3.12.9-macos-aarch64-none\n"),
        "case alpha__navamai: python: expected a full uv interpreter key like "
        "cpython-3.12.9-macos-aarch64-none, got 'cpython-3.12.9-macos-aarch64-none\\n'",
    ),
    "id that climbs out": (
        lambda d: _case(d).update(id="..", full_name="alpha/.."),
        "case ..: id: expected a safe folder name ([A-Za-z0-9._-], no leading dot, no ..), got '..'",
    ),
    "hidden id": (
        lambda d: _case(d).update(id=".git", full_name="alpha/.git"),
        "case .git: full_name: expected a safe folder name ([A-Za-z0-9._-], no leading dot, no ..), got '.git'",
    ),
    "full_name with a slash too many": (
        lambda d: _case(d).update(full_name="alpha/x/../../etc"),
        "case alpha__navamai: full_name: expected owner/name, got 'alpha/x/../../etc'",
    ),
    "id with a separator": (
        lambda d: _case(d).update(id="alpha__a b"),
        "case alpha__a b: id: expected a safe folder name ([A-Za-z0-9._-], no leading dot, no ..), got 'alpha__a b'",
    ),
    "id that names a log folder": (
        lambda d: _case(d).update(id="alpha__x.logs", full_name="alpha/x.logs"),
        "case alpha__x.logs: id: expected a name the round can make a folder of (use letters, digits, '.', '_' "
        "and '-', starting with a letter or digit, not ending in '.logs')",
    ),
    "id with a leading dash": (
        lambda d: _case(d).update(id="-alpha__x", owner="-alpha", full_name="-alpha/x"),
        "case -alpha__x: id: expected a name the round can make a folder of (use letters, digits, '.', '_' "
        "and '-', starting with a letter or digit, not ending in '.logs')",
    ),
    "empty test command": (
        lambda d: _case(d).update(test_cmd="   "),
        "case alpha__navamai: test_cmd: expected a command, got an empty one",
    ),
    "unsplittable install command": (
        lambda d: _case(d).update(install=["uv pip install 'pytest"]),
        'case alpha__navamai: install.0: cannot be split into words (No closing quotation): "uv pip install \'pytest"',
    ),
    "absolute key path": (
        lambda d: _case(d)["ground_truth"]["call_sites"][0].update(path="/etc/passwd"),
        "case alpha__navamai: ground_truth.call_sites.0.path: "
        "expected a path relative to the checkout, without .., got '/etc/passwd'",
    ),
    "key path that climbs out": (
        lambda d: _case(d)["ground_truth"]["must_not_report"].append({"path": "src/../../x.py", "line": 1, "why": "x"}),
        "case alpha__navamai: ground_truth.must_not_report.0.path: "
        "expected a path relative to the checkout, without .., got 'src/../../x.py'",
    ),
    "repo that is a git option": (
        lambda d: _case(d).update(repo="--upload-pack=touch /tmp/pwned"),
        "case alpha__navamai: repo: expected an https:// or file:// URL, got '--upload-pack=touch /tmp/pwned'",
    ),
    "repo over ssh": (
        lambda d: d["controls"][0].update(repo="ext::sh -c touch% /tmp/pwned"),
        "control gamma__migrated: repo: expected an https:// or file:// URL, got 'ext::sh -c touch% /tmp/pwned'",
    ),
    "long value is cut": (
        lambda d: _case(d).update(sha="f" * 500),
        "case alpha__navamai: sha: expected a full 40-hex lowercase commit SHA, got '" + "f" * 76 + "...",
    ),
    "unknown pack": (
        lambda d: _case(d).update(change="something-else"),
        "case alpha__navamai: provider/change: expected one of gemini/google-generativeai-to-google-genai, "
        "openai/openai-0-to-1, py-pdf/pypdf2-to-pypdf, got 'gemini/something-else'",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_a_bad_case_file_stops_collection_with_one_line_per_problem(pytester: pytest.Pytester, name: str) -> None:
    mutate, message = BAD_FILES[name]
    result = _broken(pytester, mutate)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    text = result.stderr.str()
    assert f"cases/cases.yaml: {message}" in text
    assert "Traceback" not in text and "ValidationError" not in text
    assert "::" not in result.stdout.str()


RAW_FILES = {
    "not utf-8": (b"round: 2\ncases: []\nnotes: caf\xe9\n", "cases/cases.yaml: is not UTF-8 text (line 3, byte"),
    "alias bomb": (
        b"round: 2\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        b"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ncases: [*d]\n",
        "cases/cases.yaml: is not valid YAML (line 2): an alias (*name) is not allowed in a reviewed file",
    ),
    "duplicate key": (
        b"round: 2\nround: 3\nreviewer: t\n",
        "cases/cases.yaml: is not valid YAML (line 2): duplicate key 'round' in one mapping",
    ),
    "deep nesting": (b"round: " + b"[" * 5000 + b"]" * 5000 + b"\n", "cases/cases.yaml: is"),
}


@pytest.mark.parametrize("name", sorted(RAW_FILES))
def test_a_hostile_case_file_is_one_line_and_touches_nothing(pytester: pytest.Pytester, name: str) -> None:
    content, message = RAW_FILES[name]
    (pytester.path / "cases").mkdir()
    (pytester.path / "cases" / "cases.yaml").write_bytes(content)
    results = pytester.path / "results"
    results.mkdir()
    (results / "BENCHMARK_RESULTS.md").write_text("kept\n", encoding="utf-8")
    result = pytester.runpytest("--bench-round=2", "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    text = result.stderr.str()
    assert message in text
    assert "Traceback" not in text and "RecursionError" not in text
    problem_lines = [line for line in text.splitlines() if "cases.yaml" in line]
    assert len(problem_lines) == 1 and len(problem_lines[0]) < 400
    assert sorted(p.name for p in results.iterdir()) == ["BENCHMARK_RESULTS.md"]
    assert (results / "BENCHMARK_RESULTS.md").read_text(encoding="utf-8") == "kept\n"


def test_every_problem_is_reported_at_once(pytester: pytest.Pytester) -> None:
    def mutate(data: dict[str, Any]) -> None:
        data["cases"][0]["sha"] = "short"
        data["cases"][1]["python"] = "3.12"

    result = _broken(pytester, mutate)
    text = result.stderr.str()
    assert "case zeta__app: sha:" in text and "case alpha__navamai: python:" in text


def test_not_yaml_names_the_line(pytester: pytest.Pytester) -> None:
    (pytester.path / "cases").mkdir()
    (pytester.path / "cases" / "cases.yaml").write_text("round: 2\ncases: [\n", encoding="utf-8")
    result = pytester.runpytest("--bench-round=2", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*cases/cases.yaml: is not valid YAML (line *"])


def test_fixtures_only_and_round_are_different_runs(project: pytest.Pytester) -> None:
    result = project.runpytest("--bench-round=2", "--fixtures-only", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*different runs*"])


def test_a_round_refuses_an_uncommitted_tree(project: pytest.Pytester) -> None:
    result = project.runpytest("--bench-round=2", "-k", "navamai")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*is not a git checkout*--bench-allow-dirty*"])


def test_unknown_gate_tier_is_a_usage_error(project: pytest.Pytester) -> None:
    result = project.runpytest("--bench-round=2", "--bench-fail-on=wrong,bogus", "--bench-allow-dirty", "-k", "nothing")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--bench-fail-on: unknown tier(s) bogus*"])


def test_a_templates_folder_that_cannot_be_made_is_one_usage_line(project: pytest.Pytester) -> None:
    """Before any case runs: the folder is made when the session starts, so the sandbox hides it."""
    taken = project.path / "taken"
    taken.write_text("a file, not a folder\n", encoding="utf-8")
    result = project.runpytest(
        "--bench-round=2", "--bench-allow-dirty", f"--bench-env-templates={taken}", "--bench-work=work", "-k", "nothing"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    lines = [line for line in result.errlines if "--bench-env-templates" in line]
    assert len(lines) == 1 and f"cannot make {taken}" in lines[0], result.errlines
    assert "Traceback" not in "\n".join(result.errlines)
