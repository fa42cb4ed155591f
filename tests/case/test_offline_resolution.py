"""An offline install reproduces the online resolution it reuses, even from a uv cache another
process wrote an older index page into; else it fails and the install runs online.

The package index is a local stand-in served over HTTP (a real ``uv pip install`` reads it as it
reads PyPI, through the shared uv cache), whose page for one project can be switched between the
page before and after a new release: the stale page is what another process of the same cache
fetched from a lagging mirror.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_obelize_bench.case.environment import create_venv, install_pinned
from pytest_obelize_bench.case.envreuse import Marks, reuse_install
from pytest_obelize_bench.isolation.policy import uv_binary
from pytest_obelize_bench.isolation.steps import StepRunner
from tests.helpers.environment_install import HARNESS_BIN, HARNESS_KEY, activate, make_runner, venv_of
from tests.helpers.wheels import write_wheel

KEY = "c" * 64
CUTOFF = "2026-01-15T00:00:00Z"
#: The pinned package (as the legacy SDK is) and one of its dependencies, which has a new release.
SDK, DEPENDENCY = "obelize-demo-sdk", "obelize-demo-dependency"
UPLOADED = {"1.0": "2025-06-01T00:00:00Z", "1.1": "2026-01-10T00:00:00Z"}


def _module(project: str) -> str:
    return project.replace("-", "_")


class _Index:
    """A PEP 503 simple index: the SDK at 1.0, and the dependency at ``self.versions``."""

    def __init__(self, folder: Path) -> None:
        self.files = {
            SDK: {"1.0": write_wheel(folder, _module(SDK), "1.0", requires=f"{DEPENDENCY}>=1.0")},
            DEPENDENCY: {version: write_wheel(folder, _module(DEPENDENCY), version) for version in ("1.0", "1.1")},
        }
        self.versions = ["1.0", "1.1"]

    def page(self, project: str) -> bytes:
        """The project's page in the JSON form (PEP 691), with upload times (PEP 700) before the cutoff."""
        files = [
            {
                "filename": wheel.name,
                "url": f"/files/{wheel.name}",
                "hashes": {"sha256": hashlib.sha256(wheel.read_bytes()).hexdigest()},
                "upload-time": UPLOADED[version],
            }
            for version, wheel in self.files[project].items()
            if project != DEPENDENCY or version in self.versions
        ]
        page = {
            "meta": {"api-version": "1.1"},
            "name": project,
            "versions": sorted(self.files[project]),
            "files": files,
        }
        return json.dumps(page).encode()

    def wheel(self, name: str) -> Path | None:
        found = [wheel for files in self.files.values() for wheel in files.values() if wheel.name == name]
        return found[0] if found else None


@pytest.fixture
def index(tmp_path: Path) -> Iterator[tuple[_Index, str]]:
    served = _Index(tmp_path)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self) -> None:
            self.answer(body=False)

        def do_GET(self) -> None:
            self.answer(body=True)

        def answer(self, *, body: bool) -> None:
            project = self.path.strip("/").removeprefix("simple/")
            wheel = served.wheel(self.path.removeprefix("/files/"))
            if self.path.startswith("/simple/") and project in served.files:
                data, kind = served.page(project), "application/vnd.pypi.simple.v1+json"
            elif self.path.startswith("/files/") and wheel is not None:
                data, kind = wheel.read_bytes(), "application/octet-stream"
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if body:
                self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served, f"http://127.0.0.1:{server.server_address[1]}/simple/"
    finally:
        server.shutdown()
        server.server_close()


def _runner(root: Path, case: str, uv_cache: Path, url: str) -> StepRunner:
    runner = make_runner(root, case, uv_cache)
    runner.env = {**runner.env, "UV_DEFAULT_INDEX": url, "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
    interpreter = create_venv(runner, key=HARNESS_KEY, policy="exact", venv=venv_of(runner), search_path=[HARNESS_BIN])
    activate(runner, interpreter)
    return runner


def _install(runner: StepRunner, marks: Marks) -> str:
    """The product's pinned install of the SDK, reused as a round reuses it."""
    python = venv_of(runner) / "bin" / "python"

    def install(constraints: Path | None, outputs: list[str]) -> str:
        return install_pinned(
            runner,
            number=4,
            name="install-from",
            distribution=SDK,
            version="1.0",
            interpreter=python,
            constraints=constraints,
            outputs=outputs,
        )

    return reuse_install(install, marks=marks, key=KEY, exclude_newer=CUTOFF, scratch=runner.cwd.parent / "scratch")


def _dependency(runner: StepRunner) -> str:
    module = _module(DEPENDENCY)
    (found,) = (venv_of(runner) / "lib").glob(f"python*/site-packages/{module}-*.dist-info")
    return found.name.removeprefix(f"{module}-").removesuffix(".dist-info")


def _attempts(runner: StepRunner) -> list[tuple[bool, bool]]:
    """Each ``install-from`` step: whether it ran offline, and whether it succeeded."""
    return [("--offline" in step.argv, step.exit_code == 0) for step in runner.steps if step.name == "install-from"]


def test_an_offline_install_is_held_to_the_versions_of_the_online_one(
    tmp_path: Path, index: tuple[_Index, str]
) -> None:
    served, url = index
    cache = tmp_path / "uv-cache"
    marks = Marks(tmp_path / "work")
    cases = tmp_path / "cases"

    first = _runner(cases, "first", cache, url)
    assert _install(first, marks) == "1.0"
    assert _attempts(first) == [(False, True)] and _dependency(first) == "1.1"
    assert marks.versions(KEY, CUTOFF) == [f"{DEPENDENCY}==1.1", f"{SDK}==1.0"]

    # Another process of the same uv cache fetches the page from before 1.1 and writes it there.
    served.versions = ["1.0"]
    stale = _runner(cases, "stale", cache, url)
    stale.run(4, "stale-page", [uv_binary(), "pip", "install", "--no-config", DEPENDENCY], timeout=120)
    assert _dependency(stale) == "1.0"
    served.versions = ["1.0", "1.1"]

    # Unconstrained, an offline install from that cache takes 1.0: not the mark's environment.
    bare = _runner(cases, "bare", cache, url)
    bare.run(4, "offline", [uv_binary(), "pip", "install", "--no-config", "--offline", f"{SDK}==1.0"], timeout=120)
    assert _dependency(bare) == "1.0"

    # Held to the mark's versions, the offline install cannot be satisfied and fails; the install
    # then runs online and reproduces the first case's environment.
    second = _runner(cases, "second", cache, url)
    assert _install(second, marks) == "1.0"
    assert _attempts(second) == [(True, False), (False, True)]
    assert "--constraint" in next(step.argv for step in second.steps if "--offline" in step.argv)
    assert _dependency(second) == "1.1"
    assert not (cases / "scratch" / "offline-constraints.txt").exists()

    # The online install rewrote the page: the next case goes offline, and agrees.
    third = _runner(cases, "third", cache, url)
    assert _install(third, marks) == "1.0"
    assert _attempts(third) == [(True, True)] and _dependency(third) == "1.1"
    assert marks.versions(KEY, CUTOFF) == [f"{DEPENDENCY}==1.1", f"{SDK}==1.0"]
