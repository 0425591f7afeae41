"""What the service decides before it reads a body (issue 10, defects 4, 5, 6):
authentication and the role check on every operation, the 1 MiB body limit
(declared or streamed), bounded free-text fields, and 404 (never a bare 307)
for trailing slashes and unknown paths."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import MutableMapping
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute, iter_route_contexts

from agentform.service import BASE_PATH
from tests.service.asgi import http_scope
from tests.service.conftest import ADMIN_KEY, READ_KEY, Api, assert_error

MiB = 1024 * 1024
MALFORMED = b'{"name": "x", oops'
SOME_ID = "5f0c8a52-3d0e-4a43-9a43-4d3c1b2e7f10"


def api_routes(app: FastAPI) -> list[tuple[APIRoute, str, set[str]]]:
    """(route, full path, methods) of every operation under the base path."""
    found = []
    for context in iter_route_contexts(app.routes):
        path = context.path or ""
        if isinstance(context.original_route, APIRoute) and path.startswith(BASE_PATH):
            found.append((context.original_route, path, set(context.methods or ())))
    assert len(found) > 20
    return found


def operations(app: FastAPI) -> list[tuple[str, str]]:
    """(method, path with ids filled in) of every operation under the base path."""
    return [
        (method, re.sub(r"\{[^}]+\}", str(uuid.uuid4()), path[len(BASE_PATH) :]))
        for _, path, methods in api_routes(app)
        for method in sorted(methods)
    ]


def send(api: Api, method: str, path: str, body: bytes, **headers: str) -> Any:
    return api.request(
        method, path, content=body, headers={"Content-Type": "application/json", **headers}
    )


def test_without_a_key_every_operation_is_401_whatever_the_body(api: Api, app: FastAPI) -> None:
    anonymous = api.as_key(None)
    for method, path in operations(app):
        response = send(anonymous, method, path, MALFORMED)
        assert_error(response, 401)


def test_a_read_key_on_every_write_is_403_whatever_the_body(api: Api, app: FastAPI) -> None:
    reader = api.as_key(READ_KEY)
    writes = [(m, p) for m, p in operations(app) if m not in ("GET", "HEAD")]
    assert writes
    for method, path in writes:
        assert_error(send(reader, method, path, MALFORMED), 403)


def test_a_valid_key_with_a_malformed_body_is_400(api: Api) -> None:
    body = assert_error(send(api, "POST", "/agent-profile-pools", MALFORMED), 400)
    assert body["errors"][0]["parameter"] == "body"


def test_every_operation_goes_through_the_gate(app: FastAPI) -> None:
    """The gate is the route class: an operation added with a plain APIRoute would
    read its body before authenticating."""
    from agentform.service.http.gate import ServiceRoute

    plain = [path for route, path, _ in api_routes(app) if not isinstance(route, ServiceRoute)]
    assert plain == []


# -- body size ------------------------------------------------------------------


def padded(size: int) -> bytes:
    """A valid pool body of exactly `size` bytes (JSON whitespace as padding)."""
    core = json.dumps({"name": f"p-{size}"}).encode()
    return core[:-1] + b" " * (size - len(core)) + b"}"


def test_a_body_of_exactly_1_mib_is_read(api: Api) -> None:
    response = send(api, "POST", "/agent-profile-pools", padded(MiB))
    assert response.status_code == 201, response.text


def test_a_declared_body_over_1_mib_is_400_before_any_of_it_is_read(app: FastAPI) -> None:
    status, body, read = asyncio.run(
        call(app, "POST", "/agent-profile-pools", padded(2 * MiB), declared=True)
    )
    assert status == 400
    assert body["code"] == 400 and "1 MiB" in body["message"]
    assert read == 0


def test_a_streamed_body_over_1_mib_is_400_once_the_limit_is_passed(app: FastAPI) -> None:
    status, body, read = asyncio.run(
        call(app, "POST", "/agent-profile-pools", padded(8 * MiB), declared=False)
    )
    assert status == 400
    assert "1 MiB" in body["message"] and body["errors"][0]["parameter"] == "body"
    assert read <= MiB + CHUNK  # stopped at the first chunk past the limit


def test_an_oversized_body_without_a_key_is_still_401(app: FastAPI) -> None:
    status, _, read = asyncio.run(
        call(app, "POST", "/agent-profile-pools", padded(2 * MiB), declared=True, key=None)
    )
    assert (status, read) == (401, 0)


CHUNK = 64 * 1024


async def call(
    app: FastAPI, method: str, path: str, body: bytes, declared: bool, key: str | None = ADMIN_KEY
) -> tuple[int, dict[str, Any], int]:
    """One raw ASGI request whose body arrives in chunks; returns the status, the
    decoded body, and how many body bytes the service pulled."""
    headers = [(b"content-type", b"application/json")]
    if declared:
        headers.append((b"content-length", str(len(body)).encode()))
    if key:
        headers.append((b"x-api-key", key.encode()))
    chunks = [body[i : i + CHUNK] for i in range(0, len(body), CHUNK)]
    read = 0
    out: list[MutableMapping[str, Any]] = []

    async def receive() -> dict[str, Any]:
        nonlocal read
        if not chunks:
            return {"type": "http.disconnect"}
        chunk = chunks.pop(0)
        read += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": bool(chunks)}

    async def send(message: MutableMapping[str, Any]) -> None:
        out.append(message)

    scope = http_scope(method, BASE_PATH + path, headers)
    await app(scope, receive, send)
    start = next(m for m in out if m["type"] == "http.response.start")
    payload = b"".join(m.get("body", b"") for m in out if m["type"] == "http.response.body")
    return start["status"], json.loads(payload), read


# -- free-text fields -----------------------------------------------------------


def template(**over: Any) -> dict[str, Any]:
    base = {
        "kind": "custom",
        "name": "bounded",
        "fields": [{"type": "text", "label": "Note", "required": False}],
    }
    return {**base, **over}


def step(**over: Any) -> dict[str, Any]:
    return {"key": "one", "title": "One", "fieldKeys": ["NOTE"], **over}


BOUNDS: list[tuple[str, str, int, Any]] = [
    # (path, field, limit, body for a value)
    ("/vault/templates", "description", 4000, lambda v: template(description=v)),
    ("/vault/templates", "name", 200, lambda v: template(name=v)),
    (
        "/vault/templates",
        "fields.0.hint",
        500,
        lambda v: template(
            fields=[{"type": "text", "label": "Note", "required": False, "hint": v}]
        ),
    ),
    ("/vault/templates", "steps.0.title", 200, lambda v: template(steps=[step(title=v)])),
    (
        "/vault/templates",
        "steps.0.instructions",
        4000,
        lambda v: template(steps=[step(instructions=v)]),
    ),
    ("/profiles", "name", 255, lambda v: {"name": v}),
    ("/profiles", "description", 1000, lambda v: {"name": "bounded", "description": v}),
    ("/agent-profile-pools", "name", 255, lambda v: {"name": v}),
    ("/profile-groups", "name", 255, lambda v: {"name": v}),
]


@pytest.mark.parametrize(("path", "field", "limit", "make"), BOUNDS, ids=[b[1] for b in BOUNDS])
def test_free_text_fields_are_bounded_on_create(
    api: Api, path: str, field: str, limit: int, make: Any
) -> None:
    over = api.post(path, json=make("x" * (limit + 1)))
    body = assert_error(over, 400)
    assert [e["parameter"] for e in body["errors"]] == [field]
    assert api.post(path, json=make("y" * limit)).status_code == 201


def test_a_template_description_is_bounded_on_update_too(api: Api) -> None:
    made = api.post("/vault/templates", json=template()).json()
    over = api.patch(f"/vault/templates/{made['id']}", json={"description": "z" * 4001})
    assert_error(over, 400, "description")
    ok = api.patch(f"/vault/templates/{made['id']}", json={"description": "z" * 4000})
    assert ok.status_code == 200


def test_a_search_longer_than_any_name_is_400(api: Api) -> None:
    assert_error(api.get("/agent-profile-pools", params={"searchName": "s" * 256}), 400)
    assert api.get("/agent-profile-pools", params={"searchName": "s" * 255}).status_code == 200


# -- unknown paths and trailing slashes -----------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/agent-profile-pools/"),
        ("POST", "/agent-profile-pools/"),
        ("GET", "/vault/templates/"),
        ("GET", f"/profile-groups/{SOME_ID}/"),
        ("GET", f"/profile-groups/{SOME_ID}/members/"),
        ("GET", "/"),
        ("GET", "/no-such-thing"),
    ],
)
def test_a_trailing_slash_or_an_unknown_path_is_404_with_the_error_body(
    api: Api, method: str, path: str
) -> None:
    response = api.request(method, path, follow_redirects=False)
    assert_error(response, 404)
    assert "location" not in response.headers
