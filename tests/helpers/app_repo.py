"""A small repository that uses the legacy Gemini SDK, for the tests that run obelize on one."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.gitrepo import git

APP = """\
import os

import google.generativeai as genai

genai.configure(api_key=os.environ["GEMINI_API_KEY"])

model = genai.GenerativeModel("gemini-1.5-flash")


def ask(question):
    response = model.generate_content(question)
    return response.text
"""


def make_app_repo(root: Path, app: str = APP, requirements: str = "google-generativeai==0.8.3\n") -> Path:
    root.mkdir(parents=True)
    (root / "app.py").write_text(app)
    (root / "requirements.txt").write_text(requirements)
    return root


__all__ = ["APP", "commit_all", "make_app_repo"]


def commit_all(repo: Path) -> None:
    git("init", "-q", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "init", cwd=repo)
