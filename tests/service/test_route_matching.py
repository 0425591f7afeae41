"""Routes are told apart by their path's literal start before FastAPI's full match
(`gate.ServiceRoute.matches`); under a root path (a proxy's prefix, which the full
match strips) they are matched exactly as before: the operation is found, and a
method the path lacks is 405 with every method it has."""

from __future__ import annotations

import asyncio
import json
from collections.abc import MutableMapping
from typing import Any

import pytest
from fastapi import FastAPI

from agentform.service import BASE_PATH
from tests.service.asgi import http_scope
from tests.service.conftest import ADMIN_KEY


def call(app: FastAPI, method: str, path: str, root: str = "") -> tuple[int, dict[str, str], Any]:
    scope = http_scope(method, path, [(b"x-api-key", ADMIN_KEY.encode())], root)
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    headers = {k.decode(): v.decode() for k, v in sent[0]["headers"]}
    body = b"".join(m.get("body", b"") for m in sent[1:])
    return sent[0]["status"], headers, json.loads(body)


@pytest.mark.parametrize("root", ["", "/proxy", "/agents"])
def test_operations_are_found_under_a_root_path(app: FastAPI, root: str) -> None:
    status, _, body = call(app, "GET", f"{BASE_PATH}/agent-profile-pools", root)
    assert status == 200 and body["items"] == []
    status, headers, body = call(app, "DELETE", f"{BASE_PATH}/agent-profile-pools", root)
    assert (status, headers["allow"]) == (405, "GET, POST")
    status, _, body = call(app, "GET", f"{BASE_PATH}/agent-profile-poolsx", root)
    assert status == 404
