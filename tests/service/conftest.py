"""Fixtures for the service tests: an app over a temporary SQLite file, two organizations.

The file is a copy of TEST_SEED's database, built once per test process
(tests/service/templates.py): make a service of your own with `seeded_app`, not
`create_app`, and it is copied too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio.from_thread
import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from agentform.service import Seed, create_app
from tests.service.templates import copy_database, template

ACME = "11111111-1111-4111-8111-111111111111"
OTHER = "22222222-2222-4222-8222-222222222222"
ADMIN_KEY = "acme-admin-key-0001"
READ_KEY = "acme-read-key-0001"
OTHER_KEY = "other-admin-key-0001"
BASE = "/agents/v2"

TEST_SEED = Seed.model_validate(
    {
        "organizations": [
            {
                "name": "acme",
                "id": ACME,
                "apiKeys": [
                    {"name": "admin", "key": ADMIN_KEY, "role": "admin"},
                    {"name": "reader", "key": READ_KEY, "role": "read"},
                ],
                "agents": [
                    {"name": "checkout-agent", "versions": [1, 2], "publishedVersion": 2},
                    {"name": "support-agent"},
                ],
                "profiles": [{"name": f"p{i}", "description": f"profile {i}"} for i in range(1, 6)],
            },
            {
                "name": "other",
                "id": OTHER,
                "apiKeys": [{"name": "admin", "key": OTHER_KEY, "role": "admin"}],
                "agents": [{"name": "other-agent"}],
                "profiles": [{"name": "foreign"}],
            },
        ]
    }
)


class Api:
    """A TestClient that prefixes the base path and sends a key unless told otherwise."""

    def __init__(
        self, client: TestClient, key: str | None = ADMIN_KEY, header: str = "X-Api-Key"
    ) -> None:
        self.client = client
        self.key = key
        self.header = header

    def as_key(self, key: str | None, header: str = "X-Api-Key") -> Api:
        return Api(self.client, key, header)

    def request(self, method: str, path: str, **kw: Any) -> httpx.Response:
        headers = dict(kw.pop("headers", {}) or {})
        if self.key is not None:
            headers.setdefault(self.header, self.key)
        response: httpx.Response = self.client.request(method, BASE + path, headers=headers, **kw)
        return response

    def get(self, path: str, **kw: Any) -> httpx.Response:
        return self.request("GET", path, **kw)

    def post(self, path: str, **kw: Any) -> httpx.Response:
        return self.request("POST", path, **kw)

    def patch(self, path: str, **kw: Any) -> httpx.Response:
        return self.request("PATCH", path, **kw)

    def delete(self, path: str, **kw: Any) -> httpx.Response:
        return self.request("DELETE", path, **kw)

    def ids(self, path: str) -> dict[str, str]:
        """name -> id of every item of a list."""
        out: dict[str, str] = {}
        page = 1
        while True:
            body = self.get(path, params={"page": page, "pageSize": 100}).json()
            out.update({i["name"]: i["id"] for i in body["items"]})
            if page * 100 >= body["total"]:
                return out
            page += 1


@contextmanager
def running(
    app: FastAPI, key: str | None = ADMIN_KEY
) -> Iterator[tuple[Api, Callable[[float], None]]]:
    """The app with its runtime started (lifespan), and `advance(seconds)`, which moves
    the app's ManualClock on the runner's loop, running everything that falls due."""
    with TestClient(app) as client:

        def advance(seconds: float = 0.0) -> None:
            assert client.portal is not None  # the client is running
            client.portal.call(app.state.clock.advance, seconds)

        yield Api(client, key), advance


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A database holding TEST_SEED (a copy of its template)."""
    return copy_database(template(TEST_SEED), tmp_path / "service.db")


@pytest.fixture
def app(db_path: Path) -> Iterator[FastAPI]:
    application = create_app(db_path, seed=TEST_SEED)
    yield application
    application.state.db.close()


@contextmanager
def client_of(app: FastAPI) -> Iterator[TestClient]:
    """A TestClient whose requests share one event loop thread, as inside `with
    TestClient(app)`, but without the app's lifespan: its runtime stays stopped, as
    with a bare `TestClient(app)`, which starts a thread and a loop per request
    (2-4 times the cost of a request to the service)."""
    client = TestClient(app)
    with anyio.from_thread.start_blocking_portal(**client.async_backend) as portal:
        client.portal = portal
        try:
            yield client
        finally:
            client.portal = None


@pytest.fixture
def api(app: FastAPI) -> Iterator[Api]:
    with client_of(app) as client:
        yield Api(client)


def assert_error(response: httpx.Response, status: int, *words: str) -> dict[str, Any]:
    """An error answer (docs/service/contract.md#errors): the status, JSON body {code,
    message}, code == status."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["code"] == status
    assert isinstance(body["message"], str) and body["message"]
    for word in words:
        assert word in body["message"], (word, body["message"])
    return body  # type: ignore[no-any-return]
