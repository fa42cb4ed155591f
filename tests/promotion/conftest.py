"""Fixtures the tests of promotion/ share."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import promotion_runs as pr


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The rules' own tests judge verified_success, the protocol's target; the shipped metric has its own."""
    return pr.make_project(tmp_path, pr.VERIFIED_POLICY)
