"""Environment reuse: which installs share a resolution, and that a reused environment is still checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_obelize_bench.case.envreuse import (
    MARK_BYTES,
    Marks,
    command_material,
    environment_key,
    installed_versions,
)
from tests.helpers import rounds
from tests.helpers.rounds import run_pytest

KEY_ARGS = {
    "interpreter_used": "cpython-3.12.1-linux-x86_64-gnu",
    "exclude_newer": "2026-12-01T00:00:00Z",
    "uv_cache": "/cache",
    "commands": [],
    "installs": ["google-generativeai==0.8.6"],
}


def test_exact_pins_through_uv_are_shared_by_any_case_and_the_rest_by_one_commit() -> None:
    assert command_material([]) == []
    pins = "uv pip install pytest==8.3.3 pytest-asyncio==0.24.0"
    assert command_material([pins]) == [pins]
    assert command_material([pins], commit="c0ffee") == [pins]  # pins need no commit
    assert command_material(["uv pip install -e ."], commit="c0ffee") is None  # points at one checkout's path
    assert command_material(["python -m pip install pytest==8.3.3"]) is None
    assert command_material(["uv pip install 'unbalanced"]) is None
    assert command_material(["uv pip install --index-url https://example.invalid pytest"], commit="c0ffee") is None
    assert command_material(["uv pip install ../elsewhere"], commit="c0ffee") is None
    # The checkout itself, a name without a pin, a range: the same only at the same commit.
    for command in (
        "uv pip install . pytest pytest-asyncio",
        "uv pip install '.[test]'",
        "uv pip install 'rich>=13,<14'",
    ):
        assert command_material([command]) is None
        material = command_material([command], commit="c0ffee")
        assert material is not None and material[-1] == "commit c0ffee"
        assert command_material([command], commit="decade") != material
    # Without a checkout to read, a requirements file cannot be vouched for.
    assert command_material(["uv pip install -r requirements.txt"], commit="c0ffee") is None


def test_a_requirements_file_of_exact_pins_is_shared_by_its_content(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for checkout in (one, two):
        checkout.mkdir()
        (checkout / "requirements.txt").write_text("# tests\npytest==8.3.3  # runner\n\nrich==13.9.4\n")
    command = ["uv pip install -r requirements.txt pytest-asyncio==0.24.0"]
    first = command_material(command, one)
    assert first is not None and first[0].startswith("uv pip install -r sha256:")
    assert first[0].endswith(" pytest-asyncio==0.24.0")
    assert command_material(command, two) == first
    assert command_material(["uv pip install --requirement requirements.txt pytest-asyncio==0.24.0"], two) == first
    (two / "requirements.txt").write_text("pytest==8.3.4\nrich==13.9.4\n")
    assert command_material(command, two) != first


@pytest.mark.parametrize(
    "content",
    [
        "-e .\n",  # an editable install points at one checkout's path
        "-r other.txt\n",  # an include the key would not cover
        "--index-url https://example.invalid/simple\npytest==8.3.3\n",
        "./vendored/pkg\n",
        "pkg @ https://example.invalid/pkg.tar.gz\n",
        b"pytest==8.3.3\n\xff\n",  # not UTF-8
        "pytest==8.3.3\n" * 10_000,  # over the cap
    ],
)
def test_a_requirements_file_a_key_cannot_cover_is_not_shared(tmp_path: Path, content: str | bytes) -> None:
    target = tmp_path / "requirements.txt"
    if isinstance(content, bytes):
        target.write_bytes(content)
    else:
        target.write_text(content)
    assert command_material(["uv pip install -r requirements.txt"], tmp_path, "c0ffee") is None


def test_a_requirements_file_of_ranges_or_the_checkout_is_shared_by_its_commit_and_content(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("pytest>=8\n.[test]\nrich==13.9.4\n")
    command = ["uv pip install -r requirements.txt"]
    assert command_material(command, tmp_path) is None  # it reads the checkout: no commit, no key
    first = command_material(command, tmp_path, "c0ffee")
    assert first is not None and first[-1] == "commit c0ffee" and first[0].startswith("uv pip install -r sha256:")
    assert command_material(command, tmp_path, "c0ffee") == first
    assert command_material(command, tmp_path, "decade") != first
    (tmp_path / "requirements.txt").write_text("pytest>=8.1\n.[test]\nrich==13.9.4\n")
    assert command_material(command, tmp_path, "c0ffee") != first


def test_a_requirements_file_outside_the_checkout_or_behind_a_symlink_is_not_read(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("pytest==8.3.3\n")
    (checkout / "linked.txt").symlink_to(outside)
    (checkout / "folder.txt").mkdir()
    for name in ("linked.txt", "../outside.txt", str(outside), "missing.txt", "folder.txt", "''"):
        assert command_material([f"uv pip install -r {name}"], checkout) is None, name
    assert command_material(["uv pip install -r"], checkout) is None


def test_the_key_changes_with_each_part_and_is_none_when_unshared() -> None:
    base = environment_key(**KEY_ARGS)  # type: ignore[arg-type]  # the dict's values are the right types
    assert base is not None
    for field, other in (
        ("interpreter_used", "cpython-3.11.7-linux-x86_64-gnu"),
        ("exclude_newer", "2026-11-01T00:00:00Z"),
        ("uv_cache", "/other"),
        ("commands", ["uv pip install pytest==8.3.3"]),
        ("installs", ["google-generativeai==0.8.5"]),
        ("link_mode", "copy"),  # a template of links never serves a case without the sandbox
    ):
        assert environment_key(**{**KEY_ARGS, field: other}) != base, field  # type: ignore[arg-type]
    assert environment_key(**{**KEY_ARGS, "commands": None}) is None  # type: ignore[arg-type]
    assert environment_key(**{**KEY_ARGS, "exclude_newer": None}) is None  # type: ignore[arg-type]


def test_a_mark_older_than_the_cutoff_or_without_versions_does_not_go_offline(tmp_path: Path) -> None:
    marks = Marks(tmp_path)
    key = "a" * 64
    chosen = ["google-generativeai==0.8.6", "idna==3.21"]
    assert marks.versions(key, "2026-12-01T00:00:00Z") is None
    marks.mark(key, "2026-11-30T00:00:00Z", chosen)
    assert marks.versions(key, "2026-12-01T00:00:00Z") is None
    marks.mark(key, "2026-12-01T00:00:01Z", chosen)
    assert marks.versions(key, "2026-12-01T00:00:00Z") == chosen
    marks.mark(key, "2026-12-01T00:00:01Z", [])  # an install that changed nothing holds to nothing
    assert marks.versions(key, "2026-12-01T00:00:00Z") == []
    with pytest.raises(ValueError):
        marks.mark("../escape", "2026-12-01T00:00:00Z", chosen)
    # A mark of the earlier form (no versions), or with anything but exact pins, is no resolution.
    for versions in (None, "idna==3.21", ["idna>=3"], ["idna==3.21 --index-url=x"], [7]):
        body = {"at": "2026-12-01T00:00:01Z", **({} if versions is None else {"versions": versions})}
        (marks.root / f"{key}.json").write_text(json.dumps(body), encoding="utf-8")
        assert marks.versions(key, "2026-12-01T00:00:00Z") is None, versions
    for text in ("[]", "not json", json.dumps({"at": 7, "versions": []})):
        (marks.root / f"{key}.json").write_text(text, encoding="utf-8")
        assert marks.versions(key, "2026-12-01T00:00:00Z") is None, text


def test_a_symlinked_or_oversized_mark_is_refused(tmp_path: Path) -> None:
    marks = Marks(tmp_path)
    key = "b" * 64
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps({"at": "2030-01-01T00:00:00Z", "versions": []}), encoding="utf-8")
    marks.root.mkdir(parents=True)
    (marks.root / f"{key}.json").symlink_to(target)
    assert marks.versions(key, "2026-12-01T00:00:00Z") is None
    big = {"at": "2030-01-01T00:00:00Z", "versions": [f"p{n}==1.0" for n in range(MARK_BYTES // 8)]}
    (marks.root / f"{'d' * 64}.json").write_text(json.dumps(big), encoding="utf-8")
    assert marks.versions("d" * 64, "2026-12-01T00:00:00Z") is None


# What ``uv pip install`` printed (uv 0.13): a fresh venv, an upgrade over a base, the checkout
# itself, nothing to do.
FRESH = """Using Python 3.12.1 environment at: .venv
Resolved 3 packages in 126ms
Prepared 3 packages in 5ms
Installed 3 packages in 3ms
 + google-generativeai==0.8.6
 + idna==3.21
 + typing-extensions==4.15.0
"""
UPGRADE = """Resolved 2 packages in 110ms
Prepared 1 package in 4ms
Uninstalled 1 package in 1ms
Installed 1 package in 3ms
 - idna==3.21
 + idna==3.22
"""
CHECKOUT = """Resolved 2 packages in 300ms
   Building demo @ file:///work/case
      Built demo @ file:///work/case
Prepared 2 packages in 400ms
Installed 2 packages in 3ms
 + demo==0.1.0 (from file:///work/case)
 + pytest==8.3.3
"""
NOTHING = "Audited 3 packages in 2ms\n"
SATISFIED = "Using Python 3.12.1 environment at: .venv\nChecked 1 package in 2ms\n"


def test_the_versions_an_install_chose_are_read_from_what_uv_printed() -> None:
    assert installed_versions([FRESH]) == ["google-generativeai==0.8.6", "idna==3.21", "typing-extensions==4.15.0"]
    assert installed_versions([FRESH, UPGRADE]) == [
        "google-generativeai==0.8.6",
        "idna==3.22",
        "typing-extensions==4.15.0",
    ]
    assert installed_versions([CHECKOUT]) == ["pytest==8.3.3"]  # the checkout is the commit's, not the index's
    assert installed_versions([NOTHING]) == []
    assert installed_versions([FRESH, SATISFIED]) == installed_versions([FRESH])  # a pin the first already met
    assert installed_versions([]) == []
    # A quiet install, or a log cut before the last change, does not say what it chose.
    assert installed_versions([""]) is None
    assert installed_versions([FRESH.rsplit(" + ", 1)[0]]) is None
    assert installed_versions([FRESH, "error: the network is unreachable\n"]) is None


@pytest.mark.usefixtures("index_uv_cache")
def test_a_reused_environment_still_fails_version_mismatch(tmp_path: Path) -> None:
    project = tmp_path / "project"
    rows = [
        rounds.case_row_from_fixture("trap-vertex", "ann", tmp_path),
        # "2.24.00" installs 2.24.0, which is not the pin as written: version_mismatch, twice.
        rounds.case_row_from_fixture("trap-vertex", "bob", tmp_path, to_version="2.24.00"),
        rounds.case_row_from_fixture("trap-vertex", "cat", tmp_path, to_version="2.24.00"),
    ]
    # dan and eve install identical requirements files, so eve goes offline; fay's has a range, so
    # only fay's own commit shares it: fay builds a template of its own.
    for owner, requirements in (("dan", "pytest==8.3.3\n"), ("eve", "pytest==8.3.3\n"), ("fay", "pytest>=8\n")):
        root = tmp_path / owner
        row = rounds.case_row_from_fixture("trap-vertex", owner, root, install=["uv pip install -r requirements.txt"])
        rows.append(rounds.with_files(row, root, {"requirements.txt": requirements}))
    rounds.write_case_file(project / "cases" / "cases.yaml", rows)
    done = run_pytest(
        project,
        "--bench-round=2",
        "--bench-allow-dirty",
        "--bench-interpreter=minor",
        f"--bench-work={tmp_path / 'work'}",
        rounds.own_templates(tmp_path / "work"),  # its first case builds one
    )
    records = rounds.read_records(rounds.only_run(project / "results" / "round-2"))
    assert records, done.stdout[-3000:] + done.stderr[-2000:]

    def step(case: str, name: str) -> dict[str, object]:
        found: list[dict[str, object]] = [s for s in records[case]["steps"] if s["name"] == name]
        return found[-1]

    assert records["ann__trap-vertex"]["provenance"]["sdk_to"] == "2.24.0"
    assert "--offline" not in step("ann__trap-vertex", "install-from")["argv"]  # type: ignore[operator]

    def reuses(case: str, builder: str) -> bool:
        """``case``'s venv is a view of the template ``builder`` built: no install-from of its own."""
        got, built = records[case]["provenance"], records[builder]["provenance"]
        names = {s["name"] for s in records[case]["steps"]}
        return (
            built["env_view"] == "built"
            and got["env_view"] in ("overlay", "copy")
            and got["env_template"] == built["env_template"]
            and "install-from" not in names
            and "install-from-check" in names
        )

    # bob shares ann's legacy environment (its template); cat shares bob's whole one: offline, or,
    # under a bwrap that mounts overlays, as the template of bob's install (no install of its own).
    assert reuses("bob__trap-vertex", "ann__trap-vertex")
    cat = records["cat__trap-vertex"]
    if cat["provenance"]["env_template_after"] is not None and "install-to" not in {s["name"] for s in cat["steps"]}:
        assert (
            cat["provenance"]["env_template_after"] == records["bob__trap-vertex"]["provenance"]["env_template_after"]
        )
    else:
        assert "--offline" in step("cat__trap-vertex", "install-to")["argv"]  # type: ignore[operator]
        assert step("cat__trap-vertex", "install-to")["exit_code"] == 0
    assert "--offline" not in step("dan__trap-vertex", "install-from")["argv"]  # type: ignore[operator]
    assert reuses("eve__trap-vertex", "dan__trap-vertex")
    assert "--offline" not in step("fay__trap-vertex", "install-from")["argv"]  # type: ignore[operator]
    fay = records["fay__trap-vertex"]["provenance"]
    assert fay["env_view"] == "built" and fay["env_template"] not in (
        None,
        records["dan__trap-vertex"]["provenance"]["env_template"],
    )
    for case in ("dan__trap-vertex", "eve__trap-vertex", "fay__trap-vertex"):
        assert records[case]["error"] is None, records[case]["error"]
        assert records[case]["provenance"]["sdk_from"] == "0.8.6"
    for case in ("bob__trap-vertex", "cat__trap-vertex"):
        error = records[case]["error"]
        assert records[case]["tier"] == "error" and error["reason"] == "version_mismatch", error
        assert error["step"] == "install-to-check"
