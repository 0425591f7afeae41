"""Fixtures of the batch tests: one app per module, on a manual clock, its runtime
started. A module may set `KEY` (the API key its `api` sends; default the
"batchers" organization's admin key) and `SETTINGS` (the app's settings). `api`,
`advance` and `agents` come from the module's `svc` (tests/service/clocked.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi import FastAPI

from tests.service import clocked
from tests.service.batches.support import BATCH_KEY, make_app
from tests.service.clocked import Advance
from tests.service.conftest import Api, running

api, advance, agents = clocked.api, clocked.advance, clocked.agents  # from `svc`, below


@pytest.fixture(scope="module")
def app(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[FastAPI]:
    settings = getattr(request.module, "SETTINGS", None)
    application = make_app(tmp_path_factory.mktemp("batches"), settings=settings)
    yield application
    application.state.db.close()


@pytest.fixture(scope="module")
def svc(request: pytest.FixtureRequest, app: FastAPI) -> Iterator[tuple[Api, Advance]]:
    with running(app, getattr(request.module, "KEY", BATCH_KEY)) as started:
        yield started
