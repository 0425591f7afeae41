"""Fixtures shared by the CLI tests: a fresh copy of examples/quickstart; and the
property tests' settings: no deadline per example, since a loaded CI machine runs
an example late and a timer is not what they test (time bounds are benchmarks')."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("agentform", deadline=None)
settings.load_profile("agentform")

QUICKSTART = Path(__file__).parents[1] / "examples" / "quickstart"


@pytest.fixture
def quickstart(tmp_path: Path) -> Path:
    root = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, root, ignore=shutil.ignore_patterns(".agentform"))
    return root
