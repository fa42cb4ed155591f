"""Path elision: every spelling of a harness path, longest first."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_obelize_bench.isolation.elide import Elider, label_other_paths, spellings


def test_longest_spelling_is_replaced_first() -> None:
    elider = Elider(
        [
            ("<work>", "/w/obelize-bench"),
            ("<case>", "/w/obelize-bench/round-2/owner__repo"),
            ("<logs>", "/w/obelize-bench/round-2/owner__repo.logs"),
        ]
    )
    text = (
        "/w/obelize-bench/round-2/owner__repo.logs/01-fetch.log "
        "/w/obelize-bench/round-2/owner__repo/src/app.py "
        "/w/obelize-bench/home/x"
    )
    assert elider.text(text) == "<logs>/01-fetch.log <case>/src/app.py <work>/home/x"


def test_symlinked_temp_dir_never_leaves_a_prefix_behind(tmp_path: Path) -> None:
    # Like macOS, where /var is a link to /private/var: the resolved spelling of the given path
    # ends with the given spelling itself.
    base = str(tmp_path)
    target_parent = Path(base + "/private" + base)
    (target_parent / "var" / "case" / "bin").mkdir(parents=True)
    (tmp_path / "var").symlink_to(target_parent / "var")
    given = tmp_path / "var" / "case"
    resolved = given.resolve()
    assert str(resolved) == base + "/private" + str(given)
    assert str(resolved).endswith(str(given))

    # What a venv prints: the resolved spelling; what the harness wrote: the given one.
    printed = f"{resolved}/bin/python and {given}/setup.py"
    assert Elider([("<case>", given)]).text(printed) == "<case>/bin/python and <case>/setup.py"

    # The upstream order (given spelling first, then resolved) leaves "/private" behind.
    naive = printed
    for spelling in (str(given), str(resolved)):
        naive = naive.replace(spelling, "<case>")
    assert "/private<case>" in naive


def test_given_absolute_and_resolved_spellings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    monkeypatch.chdir(tmp_path)
    assert spellings("link") == ["link", str(tmp_path / "link"), str(real)]
    elider = Elider([("<work>", "link")])
    assert elider.text(f"{tmp_path}/link/a {real}/b") == "<work>/a <work>/b"


def test_argv_is_a_tuple_of_elided_arguments(tmp_path: Path) -> None:
    elider = Elider([("<case>", tmp_path), ("<harness-python>", "/opt/py/bin/python3")])
    assert elider.argv(["/opt/py/bin/python3", "-C", tmp_path, f"--repo={tmp_path}/x", "git"]) == (
        "<harness-python>",
        "-C",
        "<case>",
        "--repo=<case>/x",
        "git",
    )


def test_first_label_wins_a_shared_spelling_and_root_is_never_a_spelling() -> None:
    elider = Elider([("<case>", "/a/b"), ("<work>", "/a/b"), ("<repo>", "/")])
    assert elider.text("/a/b/c /usr/bin") == "<case>/c /usr/bin"
    assert Elider([]).text("/anything") == "/anything"


def test_unknown_labels_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown path label"):
        Elider([("<nowhere>", os.sep + "x")])


def test_a_spelling_is_replaced_only_where_a_path_begins_and_ends() -> None:
    elider = Elider([("<home>", "/root"), ("<case>", "/w/round-2/owner__repo")])
    text = (
        "/rootfs/bin /root.bak /root-old /mnt/root/data src/root/x "
        "/root /root/.netrc /root. '/root' x=/root:/root/y -I/root/include file:///root/pkg "
        "/w/round-2/owner__repo.logs/01-fetch.log /w/round-2/owner__repo/src"
    )
    assert elider.text(text) == (
        "/rootfs/bin /root.bak /root-old /mnt/root/data src/root/x "
        "<home> <home>/.netrc <home>. '<home>' x=<home>:<home>/y -I<home>/include file://<home>/pkg "
        "/w/round-2/owner__repo.logs/01-fetch.log <case>/src"
    )


@pytest.mark.parametrize(
    ("printed", "shown"),
    [
        ("/tmp/x/y.py:12: AssertionError", "<path>:12: AssertionError"),
        ('File "/usr/lib/python3.12/x.py", line 3', 'File "<path>", line 3'),
        ("PATH=/usr/bin:/bin", "PATH=<path>:<path>"),
        ("--rootdir=/srv/x (/srv/y) [/srv/z] '/srv/w'", "--rootdir=<path> (<path>) [<path>] '<path>'"),
        ("gcc -I/usr/include -o/tmp/a.out", "gcc -I<path> -o<path>"),
        ("pkg @ file:///tmp/wheels/pkg.whl", "pkg @ file://<path>"),
        ("it ends in /tmp/x.", "it ends in <path>."),
        # what is not an absolute path, or is already labelled, stays as it was
        ("<case>/src/app.py <home>/.netrc", "<case>/src/app.py <home>/.netrc"),
        ("tests/test_app.py ./x/y ../z ~/w", "tests/test_app.py ./x/y ../z ~/w"),
        (
            "https://pypi.org/simple/pkg/ http://localhost:8000/api",
            "https://pypi.org/simple/pkg/ http://localhost:8000/api",
        ),
        ("1/2 and/or a / b 10 it/s 2026/12/01 </div> //", "1/2 and/or a / b 10 it/s 2026/12/01 </div> //"),
    ],
)
def test_every_other_absolute_path_is_shown_as_path(printed: str, shown: str) -> None:
    assert label_other_paths(printed) == shown
    assert label_other_paths(shown) == shown  # labelling twice changes nothing
