"""Fixtures: an in-process service per test, and a workspace directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from .harness import Service


@pytest.fixture
def service(tmp_path: Path) -> Service:
    return Service(tmp_path / "service.db")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root
