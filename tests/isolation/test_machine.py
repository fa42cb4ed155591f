"""The user's and the host's names in what a step printed: whole words, never inside a path."""

from __future__ import annotations

import os
import pwd
import socket

import pytest

from pytest_obelize_bench.isolation.machine import MachineNames, label_names, this_machine

ROOT_ON_VM = MachineNames(user="root", host="vm", home="/root")


def test_this_machine_is_what_the_password_database_and_the_host_say() -> None:
    entry = pwd.getpwuid(os.getuid())
    names = this_machine()
    assert (names.user, names.home, names.host) == (entry.pw_name, entry.pw_dir, socket.gethostname() or None)


@pytest.mark.parametrize(
    ("printed", "shown"),
    [
        ("user=root host: vm", "user=<user> host: <host>"),
        ("root@vm:~$ 'root' \"vm\" (root) [vm]", "<user>@<host>:~$ '<user>' \"<host>\" (<user>) [<host>]"),
        ("ssh://root@vm/x http://vm:8000/api", "ssh://<user>@<host>/x http://<host>:8000/api"),
        ("Root on VM.", "<user> on <host>."),
        ("vm.example.org and vm.lan.", "<host> and <host>."),
        ("vm.log root.log", "<host> root.log"),  # a file named after the host goes with its name
        # a longer word, a file name or a path is not the name
        ("rootdir: <case> vmstat root_cause root-ca root.py", "rootdir: <case> vmstat root_cause root-ca root.py"),
        ("tests/root/test_x.py <case>/root/vm ./vm", "tests/root/test_x.py <case>/root/vm ./vm"),
        # a label is not a name, nor is a name labelled twice
        ("<user> <host> <home>", "<user> <host> <home>"),
    ],
)
def test_the_user_and_the_host_are_labelled_as_whole_words(printed: str, shown: str) -> None:
    assert label_names(printed, ROOT_ON_VM) == shown


def test_a_name_that_is_a_label_word_leaves_the_labels_alone() -> None:
    names = MachineNames(user="user", host="host")
    assert label_names("user on host: <user> <host> <home>", names) == "<user> on <host>: <user> <host> <home>"


@pytest.mark.parametrize("host", [None, "", "x"])
def test_an_empty_or_one_letter_name_is_left_alone(host: str | None) -> None:
    names = MachineNames(user="a", host=host)
    assert label_names("a x in a box", names) == "a x in a box"
