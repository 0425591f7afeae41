"""Fixtures: an in-process service per test, a workspace directory, and the small
contract kinds (registered only while a test uses them) with their in-memory API."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentform.config.document import document_model
from agentform.kinds import Kind
from tests.provisioner.contract_kinds import CONTRACT_KINDS, FakeApi
from tests.provisioner.harness import Service


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    made = Service(tmp_path / "service.db")
    yield made
    made.close()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def contract(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApi]:
    for kind in CONTRACT_KINDS:
        monkeypatch.setitem(Kind.registry, kind.name, kind())
    document_model.cache_clear()
    yield FakeApi()
    document_model.cache_clear()
