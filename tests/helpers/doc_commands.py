"""The shell commands a documentation page shows, as a reader would paste them."""

from __future__ import annotations

import re


def shell_commands(markdown: str) -> list[str]:
    """Each command of the page's ``sh`` blocks, continuation lines joined, trailing comments dropped."""
    commands: list[str] = []
    for block in re.findall(r"^```sh\n(.*?)^```$", markdown, re.MULTILINE | re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            command = re.sub(r"\s+#.*$", "", line).strip()
            if command and not command.startswith("#"):
                commands.append(command)
    return commands


def section(markdown: str, heading: str) -> str:
    """The text under a ``## heading`` up to the next heading of that level."""
    start = markdown.index(f"\n## {heading}\n")
    end = markdown.find("\n## ", start + 1)
    return markdown[start : end if end != -1 else len(markdown)]
