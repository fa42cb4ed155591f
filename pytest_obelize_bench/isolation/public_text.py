"""What of a step's output may be published: nothing that tells which machine printed it.

A suite's log tails, an error's detail and the interpreter's path are published as a step printed
them, and a step can print any path of the machine, its user's name and its host's.  So every
absolute path is labelled: the harness's own paths by their labels (``<case>``, ``<logs>``,
``<work>``, ``<harness-python>``, ..., the password database's home as ``<home>``), any other as
``<path>``; the user and the host read ``<user>`` and ``<host>``; and the value of every long
harness environment variable is hidden.  A path inside the case's tree stays whole, as
``<case>/...``, and a relative path as it was.
"""

from __future__ import annotations

from collections.abc import Iterable

from pytest_obelize_bench.isolation.elide import Elider, label_other_paths, redact
from pytest_obelize_bench.isolation.machine import MachineNames, label_names

#: How long a public error detail may be.
DETAIL_CHARS = 200


def public_text(text: str, elider: Elider | None, environ: Iterable[tuple[str, str]], names: MachineNames) -> str:
    """``text`` as it may be published: harness paths labelled, secrets hidden, other paths and names labelled.

    Secrets are hidden before the machine's names and other paths are labelled, as a label could
    split a secret's value (a URL with a password and the host's name) so that it is no longer found.
    """
    shown = elider.text(text) if elider is not None else text
    shown = redact(shown, environ)
    return label_names(label_other_paths(shown), names)


def public_detail(detail: str, elider: Elider | None, environ: Iterable[tuple[str, str]], names: MachineNames) -> str:
    """An error detail fit for a published record: ``public_text`` on one line, bounded."""
    text = " ".join(public_text(detail, elider, environ, names).split())
    return text if len(text) <= DETAIL_CHARS else text[: DETAIL_CHARS - 3] + "..."


__all__ = ["DETAIL_CHARS", "public_detail", "public_text"]
