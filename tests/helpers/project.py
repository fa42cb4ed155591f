"""Where the project's own files are, for the tests that read them (the case file, results, docs)."""

from __future__ import annotations

from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]

__all__ = ["PROJECT"]
