"""Fixtures of the batch tests: one app per module, on a manual clock, its runtime
started. A module may set `KEY` (the API key its `api` sends; default the
"batchers" organization's admin key) and `SETTINGS` (the app's settings)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from fastapi import FastAPI

from ..conftest import Api, running
from .support import BATCH_KEY, make_app

Advance = Callable[[float], None]


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


@pytest.fixture(scope="module")
def api(svc: tuple[Api, Advance]) -> Api:
    return svc[0]


@pytest.fixture(scope="module")
def advance(svc: tuple[Api, Advance]) -> Advance:
    return svc[1]


@pytest.fixture(scope="module")
def agents(api: Api) -> dict[str, str]:
    return api.ids("/agents")
