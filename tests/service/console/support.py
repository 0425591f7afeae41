"""A console client for the tests: a TestClient on loopback that signs in as a
browser does (the sign-in form's token, then the session cookie) and reads the
CSRF token of a page's forms."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.service.conftest import Api

LOOPBACK = "http://127.0.0.1"
Advance = Callable[[float], None]
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def csrf_of(html: str) -> str:
    found = CSRF.search(html)
    assert found, "no CSRF token in the page"
    return found.group(1)


def loopback_client(app: FastAPI, base_url: str = LOOPBACK, **kw: Any) -> TestClient:
    """A TestClient as a browser on this machine: from 127.0.0.1, to a loopback host."""
    kw.setdefault("client", ("127.0.0.1", 50000))
    return TestClient(app, base_url=base_url, follow_redirects=False, **kw)


@contextmanager
def running_console(app: FastAPI, key: str) -> Iterator[tuple[Console, Api, Advance]]:
    """The app with its runtime started, a console client and an API client sharing
    it, and `advance(seconds)` moving its ManualClock on the runner's loop."""
    with loopback_client(app) as client:

        def advance(seconds: float = 0.0) -> None:
            assert client.portal is not None
            client.portal.call(app.state.clock.advance, seconds)

        yield Console(app, client=client), Api(client, key), advance


class Console:
    def __init__(
        self,
        app: FastAPI,
        base_url: str = LOOPBACK,
        client: TestClient | None = None,
        client_address: tuple[str, int] = ("127.0.0.1", 50000),
    ) -> None:
        self.client = client or loopback_client(app, base_url, client=client_address)

    def get(self, path: str, **kw: Any) -> httpx.Response:
        response: httpx.Response = self.client.get("/console" + path, **kw)
        return response

    def post(self, path: str, data: dict[str, str], **kw: Any) -> httpx.Response:
        response: httpx.Response = self.client.post("/console" + path, data=data, **kw)
        return response

    def sign_in(self, key: str, next_path: str | None = None) -> httpx.Response:
        form = self.get("/sign-in")
        assert form.status_code == 200, form.text
        data = {"csrf": csrf_of(form.text), "key": key}
        if next_path is not None:
            data["next"] = next_path
        return self.post("/sign-in", data)

    def signed_in(self, key: str) -> Console:
        answer = self.sign_in(key)
        assert answer.status_code == 303, answer.text
        return self

    def action(self, page: str, path: str, data: dict[str, str]) -> httpx.Response:
        """Posts a form of `page` to `path`, with the page's CSRF token."""
        shown = self.get(page)
        assert shown.status_code == 200, shown.text
        return self.post(path, {"csrf": csrf_of(shown.text), **data})
