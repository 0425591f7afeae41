"""The error shape (docs/service/contract.md#errors) on every kind of failure, and no
422 anywhere."""

from __future__ import annotations

import pytest
from fastapi import FastAPI

from tests.service.conftest import BASE, Api, assert_error


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/nope"),
        ("POST", "/agents/v2/nope"),
        ("GET", "/agents/v2/agents/x/y/z"),
        ("GET", "/"),
    ],
)
def test_unknown_paths_are_404(api: Api, method: str, path: str) -> None:
    r = api.client.request(method, path, headers={"X-Api-Key": api.key or ""})
    assert_error(r, 404)


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PUT", "/agents/v2/context", "GET"),
        ("DELETE", "/agents/v2/agents", "GET"),
        ("TRACE", "/agents/v2/agent-profile-pools", "GET, POST"),
        ("TRACE", "/agents/v2/profile-groups/{id}", "GET, PATCH, DELETE"),
        ("PATCH", "/agents/v2/temp-files", "POST"),
    ],
)
def test_a_method_a_known_path_does_not_have_is_405_with_allow(
    api: Api, method: str, path: str, allowed: str
) -> None:
    path = path.replace("{id}", "11111111-1111-4111-8111-111111111111")
    r = api.client.request(method, path, headers={"X-Api-Key": api.key or ""})
    assert_error(r, 405, allowed)
    assert r.headers["allow"] == allowed


def test_validation_is_400_never_422(api: Api) -> None:
    for r in (
        api.get("/profiles", params={"page": "x"}),
        api.get("/profiles", params={"pageSize": "1.5"}),
        api.post("/profiles", json=[]),
        api.post("/profiles"),
    ):
        assert_error(r, 400)


def test_server_error_is_a_bare_500(api: Api, app: FastAPI) -> None:
    with app.state.db.write() as conn:
        conn.execute("DROP TABLE profiles")  # the next profile read fails inside SQLite
    r = api.get("/profiles")
    body = assert_error(r, 500)
    assert body["message"] == "internal server error"
    assert "sqlite" not in r.text.lower() and "Traceback" not in r.text


def test_openapi_document_has_no_422_and_documents_errors(api: Api) -> None:
    doc = api.client.get(f"{BASE}/openapi.json").json()
    assert doc["info"]["title"] == "Agent Service" and doc["info"]["version"] == "v1"
    for item in doc["paths"].values():
        for operation in item.values():
            assert "422" not in operation["responses"]
            for status in ("400", "401", "403", "404", "500"):
                ref = operation["responses"][status]["content"]["application/json"]["schema"]
                assert ref == {"$ref": "#/components/schemas/ErrorBody"}
    assert "HTTPValidationError" not in doc["components"]["schemas"]
