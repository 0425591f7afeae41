"""Authentication and roles (docs/service/contract.md#authentication-and-organizations)
on every operation of the service.

OPERATIONS is the table of every operation with a valid request and its
success status; a test checks that it covers the whole OpenAPI document. The
objects the operations name are made once for the module (`prepared`); each test
that writes gets a copy of that database, so one test's writes are never another's
state. The cases where a key is refused or only reads share one app (`refusing`):
their requests change nothing but the pause a resume case makes first, with the
admin key (and a write that got through fails its own case).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI

from agentform.service import create_app
from agentform.service.store import executions, organizations
from tests.service.conftest import (
    ACME,
    ADMIN_KEY,
    BASE,
    OTHER_KEY,
    READ_KEY,
    TEST_SEED,
    Api,
    assert_error,
    client_of,
)
from tests.service.templates import copy_database, snapshot

TEMPLATE = {
    "kind": "custom",
    "name": "t-new",
    "fields": [{"type": "text", "label": "Note", "required": False}],
}


class Upload(list):  # type: ignore[type-arg]
    """A multipart body: the `files` of the request."""


UPLOAD = Upload([("files", ("note.txt", b"hello"))])

BATCH = {
    "agentId": "{agent}",
    "name": "b-new",
    "startAt": "2030-01-01T00:00:00Z",
    "config": {"type": "timeBatching", "batchSize": 10, "batchInterval": 60},
    "items": [{"inputs": {"a": "b"}}],
}

# (method, path with {placeholders}, body, success status)
Operation = tuple[str, str, Any, int]  # method, path, body, success status
OPERATIONS: list[Operation] = [
    ("GET", "/context", None, 200),
    ("GET", "/agents", None, 200),
    ("GET", "/agents/{agent}", None, 200),
    ("GET", "/profiles", None, 200),
    ("POST", "/profiles", {"name": "new-profile"}, 201),
    ("GET", "/profiles/{profile}", None, 200),
    ("PATCH", "/profiles/{profile}", {"description": "d"}, 200),
    ("DELETE", "/profiles/{profile}", None, 204),
    ("GET", "/agent-profiles", None, 200),
    ("POST", "/agent-profiles", {"name": "new-profile"}, 201),
    ("GET", "/agent-profiles/{profile}", None, 200),
    ("PATCH", "/agent-profiles/{profile}", {"description": "d"}, 200),
    ("DELETE", "/agent-profiles/{profile}", None, 204),
    ("GET", "/vault/templates", None, 200),
    ("POST", "/vault/templates", TEMPLATE, 201),
    ("GET", "/vault/templates/{template}", None, 200),
    ("PATCH", "/vault/templates/{template}", {"description": "d"}, 200),
    ("DELETE", "/vault/templates/{template}", None, 204),
    ("POST", "/temp-files", UPLOAD, 201),
    ("POST", "/temp-files/{organization}", UPLOAD, 200),
    ("POST", "/agents/{agent}/execute", {"inputs": {"a": "b"}}, 202),
    ("GET", "/executions", None, 200),
    ("GET", "/executions/{execution}", None, 200),
    ("POST", "/executions/{execution}/pause", None, 200),
    ("POST", "/executions/{execution}/resume", None, 200),
    ("POST", "/executions/{execution}/cancel", None, 200),
    ("POST", "/executions/{execution}/user-messages", {"message": "hi"}, 202),
    ("GET", "/webhook-integrations", None, 200),
    ("POST", "/webhook-integrations", {"name": "hook-new", "url": "https://h.example/"}, 201),
    ("GET", "/webhook-integrations/{integration}", None, 200),
    ("PATCH", "/webhook-integrations/{integration}", {"url": "https://h.example/2"}, 200),
    ("DELETE", "/webhook-integrations/{integration}", None, 204),
    ("POST", "/webhook-integrations/{integration}/test", None, 200),
    ("GET", "/webhook-integrations/{integration}/deliveries", None, 200),
    ("GET", "/webhook-integrations/{integration}/attachments", None, 200),
    ("GET", "/agents/{agent}/webhooks", None, 200),
    ("PUT", "/agents/{agent}/webhooks/{integration}", {"eventRules": ["*"]}, 200),
    ("DELETE", "/agents/{agent}/webhooks/{integration}", None, 204),
    ("GET", "/webhook-signing-key", None, 200),
    ("POST", "/execution-batches", BATCH, 201),
    ("GET", "/execution-batches", None, 200),
    ("GET", "/execution-batches/{batch}", None, 200),
    ("GET", "/execution-batches/{batch}/items", None, 200),
    ("POST", "/execution-batches/{batch}/pause", None, 200),
    ("POST", "/execution-batches/{batch}/resume", None, 200),
    ("POST", "/execution-batches/{batch}/cancel", None, 200),
]
for _coll, _ph in (("/agent-profile-pools", "{pool}"), ("/profile-groups", "{group}")):
    OPERATIONS += [
        ("GET", _coll, None, 200),
        ("POST", _coll, {"name": "new-set"}, 201),
        ("GET", f"{_coll}/{_ph}", None, 200),
        ("PATCH", f"{_coll}/{_ph}", {"allowConcurrentUse": True}, 200),
        ("DELETE", f"{_coll}/{_ph}", None, 204),
        ("GET", f"{_coll}/{_ph}/members", None, 200),
        ("POST", f"{_coll}/{_ph}/members", {"profileIds": ["{profile}"]}, 204),
        ("DELETE", f"{_coll}/{_ph}/members", {"profileIds": ["{profile}"]}, 204),
    ]

KEY_HEADERS = [
    "X-Api-Key",
    "X-Service-Agents-Api-Key",  # the header the seed shows on execute and list-pools
]
OP_IDS = [f"{m} {p}" for m, p, _, _ in OPERATIONS]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The database holding the objects the operations name, and their ids: made once."""
    folder = tmp_path_factory.mktemp("auth")
    made: tuple[Path, dict[str, str]] = snapshot(folder, TEST_SEED, _make_objects)
    return made


@pytest.fixture
def db_path(tmp_path: Path, prepared: tuple[Path, dict[str, str]]) -> Path:
    """This test's copy of the prepared database (the conftest's `app` opens it)."""
    return copy_database(prepared[0], tmp_path / "service.db")


@pytest.fixture(scope="module")
def refusing(
    prepared: tuple[Path, dict[str, str]], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Api]:
    """One app on a copy of the prepared database, for the cases that write nothing."""
    path = copy_database(prepared[0], tmp_path_factory.mktemp("refusing") / "service.db")
    app = create_app(path, seed=TEST_SEED)
    try:
        with client_of(app) as client:
            yield Api(client)
    finally:
        app.state.db.close()


@pytest.fixture
def ids(prepared: tuple[Path, dict[str, str]]) -> dict[str, str]:
    return prepared[1]


def _make_objects(app: FastAPI) -> dict[str, str]:
    """One object of each kind the operations name, by the API; their ids by name."""
    with client_of(app) as client:
        return _objects(Api(client), app)


def _objects(api: Api, app: FastAPI) -> dict[str, str]:
    agent = api.ids("/agents")["checkout-agent"]
    execution = api.post(f"/agents/{agent}/execute", json={}).json()["executionId"]
    with app.state.db.write() as conn:  # the runtime is not running: say it runs
        executions.update(conn, execution, status="running")
    return {
        "organization": ACME,
        "agent": agent,
        "execution": execution,
        "profile": api.ids("/profiles")["p1"],
        "pool": api.post("/agent-profile-pools", json={"name": "pool"}).json()["id"],
        "group": api.post("/profile-groups", json={"name": "group"}).json()["id"],
        "template": api.post("/vault/templates", json={**TEMPLATE, "name": "t"}).json()["id"],
        "integration": _attached_integration(api),
        "batch": api.post(
            "/execution-batches", json=_fill({**BATCH, "name": "b"}, {"agent": agent})
        ).json()["id"],
    }


def _attached_integration(api: Api) -> str:
    """An integration attached to checkout-agent (so deleting the attachment is a 204)."""
    integration = api.post("/webhook-integrations", json={"name": "hook", "url": "https://h/"})
    integration_id: str = integration.json()["id"]
    agent = api.ids("/agents")["checkout-agent"]
    api.request("PUT", f"/agents/{agent}/webhooks/{integration_id}", json={"eventRules": ["*"]})
    return integration_id


def _fill(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, str):
        return value.format(**ids)
    if isinstance(value, list):
        return [_fill(v, ids) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, ids) for k, v in value.items()}
    return value


def call(api: Api, op: tuple[str, str, Any, int], ids: dict[str, str], **kw: Any) -> Any:
    method, path, body, _ = op
    if method == "POST" and path.endswith("/resume"):  # resume needs a paused one
        api.as_key(ADMIN_KEY).post(_fill(path.replace("/resume", "/pause"), ids))
    if isinstance(body, Upload):
        kw["files"] = body
    elif body is not None:
        kw["json"] = _fill(body, ids)
    return api.request(method, _fill(path, ids), **kw)


def test_table_covers_every_documented_operation(api: Api) -> None:
    doc = api.client.get(f"{BASE}/openapi.json").json()
    documented = {
        (method.upper(), path.removeprefix(BASE))
        for path, item in doc["paths"].items()
        for method in item
        if path.startswith(BASE)
    }
    tabled = {(m, p) for m, p, _, _ in OPERATIONS}
    assert {(m, _shape(p)) for m, p in documented} == {(m, _shape(p)) for m, p in tabled}


def _shape(path: str) -> str:
    return re.sub(r"\{\w+\}", "{}", path)


@pytest.mark.parametrize("header", KEY_HEADERS)
@pytest.mark.parametrize("op", OPERATIONS, ids=OP_IDS)
def test_each_header_works_on_every_operation(
    api: Api, ids: dict[str, str], op: Operation, header: str
) -> None:
    r = call(api.as_key(ADMIN_KEY, header), op, ids)
    assert r.status_code == op[3], r.text


@pytest.mark.parametrize("op", OPERATIONS, ids=OP_IDS)
def test_401_without_a_valid_key(refusing: Api, ids: dict[str, str], op: Operation) -> None:
    assert_error(call(refusing.as_key(None), op, ids), 401, "missing")
    assert_error(call(refusing.as_key("no-such-key-000"), op, ids), 401, "invalid")
    both = {"X-Api-Key": ADMIN_KEY, "X-Service-Agents-Api-Key": READ_KEY}
    assert_error(call(refusing.as_key(None), op, ids, headers=both), 401, "disagree")


@pytest.mark.parametrize("op", OPERATIONS, ids=OP_IDS)
def test_read_key_reads_but_never_writes(refusing: Api, ids: dict[str, str], op: Operation) -> None:
    r = call(refusing.as_key(READ_KEY), op, ids)
    if op[0] == "GET":
        assert r.status_code == 200
    else:
        assert_error(r, 403)


def test_same_key_in_both_headers_is_fine(api: Api) -> None:
    both = {"X-Api-Key": ADMIN_KEY, "X-Service-Agents-Api-Key": ADMIN_KEY}
    assert api.as_key(None).get("/context", headers=both).status_code == 200


def test_context_says_who_is_calling(api: Api) -> None:
    body = api.as_key(READ_KEY).get("/context").json()
    assert body["organizationName"] == "acme"
    assert body["apiKey"]["name"] == "reader" and body["apiKey"]["role"] == "read"
    assert api.as_key(OTHER_KEY).get("/context").json()["organizationName"] == "other"


def test_revoked_key_is_401(api: Api, app: FastAPI) -> None:
    assert api.as_key(READ_KEY).get("/context").status_code == 200  # the key map is loaded
    with app.state.db.write() as conn:
        assert organizations.revoke_key(conn, ACME, "reader")
    assert_error(api.as_key(READ_KEY).get("/context"), 401)


def test_keys_are_stored_hashed(app: FastAPI) -> None:
    with app.state.db.read() as conn:
        stored = [r[0] for r in conn.execute("SELECT key_hash FROM api_keys")]
    assert ADMIN_KEY not in stored and all(len(h) == 64 for h in stored)


def test_authenticating_a_request_makes_no_sqlite_call(
    api: Api, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key map is in memory: a request that needs no data (GET /context), or is
    refused (a wrong key), never waits on SQLite, on the event loop or anywhere."""
    db = app.state.db
    api.get("/context")  # loaded at start already; this proves it answers
    calls: list[str] = []
    monkeypatch.setattr(db, "read", lambda: calls.append("read"))
    monkeypatch.setattr(db, "write", lambda: calls.append("write"))
    monkeypatch.setattr(db, "_connection", lambda: calls.append("connection"))
    assert api.get("/context").status_code == 200
    assert_error(api.as_key("not-a-key-at-all").get("/context"), 401)
    assert_error(api.as_key(READ_KEY).post("/agent-profile-pools", json={"name": "x"}), 403)
    assert calls == []
