"""Every app made in one process serves the same route objects, the API's and the
console's (app._include_routes, console.install_console): FastAPI builds what serves
an included router's routes again for each app, on the first request walking past
them. Each app still answers from its own state, and with its own routes only."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from starlette.routing import Route

from agentform.service.settings import ServiceSettings
from tests.service.conftest import TEST_SEED, Api, client_of
from tests.service.templates import seeded_app


def _included(app: FastAPI) -> set[int]:
    """The routes the service's routers gave the app (not its own documentation's)."""
    return {id(route) for route in app.router.routes if type(route) is not Route}


def test_two_apps_share_their_routes_and_answer_each_from_its_own_database(
    tmp_path: Path,
) -> None:
    first = seeded_app(tmp_path / "first.db", TEST_SEED)
    second = seeded_app(tmp_path / "second.db", TEST_SEED)
    try:
        assert _included(first) == _included(second)  # the same objects
        with client_of(first) as one, client_of(second) as two:
            assert Api(one).post("/profiles", json={"name": "only-in-first"}).status_code == 201
            assert "only-in-first" in Api(one).ids("/profiles")
            assert "only-in-first" not in Api(two).ids("/profiles")
            assert Api(two).post("/profiles", json={"name": "only-in-first"}).status_code == 201
    finally:
        _close(first, second)


def test_an_app_without_the_console_has_none_of_its_routes_after_one_with_it(
    tmp_path: Path,
) -> None:
    with_console = seeded_app(tmp_path / "on.db", TEST_SEED)
    without = seeded_app(tmp_path / "off.db", TEST_SEED, settings=ServiceSettings(console="off"))
    try:
        assert _included(without) < _included(with_console)
        with client_of(with_console) as on, client_of(without) as off:
            assert on.get("/console/login").status_code != 404
            assert off.get("/console/login").status_code == 404
            assert Api(off).get("/context").status_code == 200
    finally:
        _close(with_console, without)


def _close(*apps: FastAPI) -> None:
    for app in apps:
        app.state.db.close()
