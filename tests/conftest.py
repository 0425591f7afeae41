"""Fixtures shared by the CLI tests: a fresh copy of examples/quickstart."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

QUICKSTART = Path(__file__).parents[1] / "examples" / "quickstart"


@pytest.fixture
def quickstart(tmp_path: Path) -> Path:
    root = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, root, ignore=shutil.ignore_patterns(".agentform"))
    return root
