"""Requests that answered 500 (a non-ASCII link signature, a test of an integration
deleted meanwhile) and an order that did not match the search (sorting by name)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from agentform.service import create_app
from agentform.service.routes import webhooks as webhook_routes
from agentform.service.settings import ServiceSettings
from agentform.service.store import webhooks as webhook_store
from tests.service.conftest import ACME, TEST_SEED, Api, assert_error


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FastAPI]:
    application = create_app(tmp_path_factory.mktemp("hostile") / "service.db", seed=TEST_SEED)
    yield application
    application.state.db.close()


@pytest.fixture(scope="module")
def api(app: FastAPI) -> Api:
    # No lifespan: the runtime is not running, so a test of an integration does not wait.
    return Api(TestClient(app))


@pytest.mark.parametrize("signature", ["%C3%A9", "%00", "abc", "g" * 64, "A" * 64])
def test_a_malformed_link_signature_is_a_400(api: Api, signature: str) -> None:
    path = f"/execution-files/{uuid.uuid4()}?expires=1&signature={signature}"
    assert_error(api.client.get(path), 400, "signature")


def test_a_well_formed_but_wrong_signature_is_still_a_403(api: Api) -> None:
    path = f"/execution-files/{uuid.uuid4()}?expires=1&signature={'a' * 64}"
    assert_error(api.client.get(path), 403, "signature")


def test_a_test_of_an_integration_deleted_meanwhile_is_a_404(
    app: FastAPI, api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    created = api.post(
        "/webhook-integrations", json={"name": "raced", "url": "http://127.0.0.1:9/hook"}
    )
    integration = created.json()["id"]
    real_enqueue = webhook_routes.enqueue_test  # type: ignore[attr-defined]

    def enqueue_then_deleted(conn: Any, *args: Any) -> None:
        real_enqueue(conn, *args)
        # The DELETE of the integration lands right after the test's delivery is written.
        webhook_store.delete_integration(conn, ACME, integration)

    monkeypatch.setattr(webhook_routes, "enqueue_test", enqueue_then_deleted)
    response = api.post(f"/webhook-integrations/{integration}/test")
    assert_error(response, 404, "integration")
    assert_error(api.get(f"/webhook-integrations/{integration}"), 404)


def test_sorting_by_name_ignores_case_like_the_name_search(api: Api) -> None:
    for name in ("sort-beta", "Sort-Alpha", "SORT-CHARLIE", "sort-alpha"):
        assert api.post("/profile-groups", json={"name": name}).status_code == 201

    def names(**params: str) -> list[str]:
        body = api.get("/profile-groups", params={"searchName": "SORT-", **params}).json()
        return [g["name"] for g in body["items"]]

    ascending = names(sortField="name")
    assert ascending == ["Sort-Alpha", "sort-alpha", "sort-beta", "SORT-CHARLIE"]
    assert names(sortField="name", sortDirection="desc") == ascending[::-1]


METADATA_URLS = ["http://169.254.169.254/latest/", "http://0xa9fea9fe/", "http://[fd00:ec2::254]/"]


@pytest.mark.parametrize("url", METADATA_URLS)
def test_a_webhook_to_a_metadata_address_is_a_400_on_create_and_update(api: Api, url: str) -> None:
    before = api.get("/webhook-integrations").json()["total"]
    response = api.post("/webhook-integrations", json={"name": "meta", "url": url})
    assert_error(response, 400, "url", "--allow-private-webhooks")
    assert api.get("/webhook-integrations").json()["total"] == before
    created = api.post(
        "/webhook-integrations", json={"name": f"loop-{url[-6:]}", "url": "http://127.0.0.1:9/"}
    )
    assert created.status_code == 201, created.text
    integration = created.json()["id"]
    assert_error(api.patch(f"/webhook-integrations/{integration}", json={"url": url}), 400, "url")
    assert api.get(f"/webhook-integrations/{integration}").json()["url"] == "http://127.0.0.1:9/"


def test_a_service_allowing_private_webhooks_accepts_them(tmp_path: Path) -> None:
    settings = ServiceSettings(allow_private_webhooks=True)
    application = create_app(tmp_path / "service.db", seed=TEST_SEED, settings=settings)
    try:
        allowed = Api(TestClient(application))
        for index, url in enumerate(METADATA_URLS):
            body = {"name": f"meta-{index}", "url": url}
            assert allowed.post("/webhook-integrations", json=body).status_code == 201
    finally:
        application.state.db.close()


@pytest.mark.parametrize("value", ['{"a": ' * 300 + "1" + "}" * 300, "NaN", "1e999", "[NaN]"])
def test_a_filter_value_too_deep_or_not_finite_is_a_400(api: Api, value: str) -> None:
    agent = api.get("/agents").json()["items"][0]["id"]
    created = api.post(
        "/webhook-integrations",
        json={"name": f"f-{len(value)}-{value[:2]}", "url": "http://127.0.0.1:9/"},
    )
    integration = created.json()["id"]
    body = (
        '{"eventRules": ["EXECUTION_COMPLETED"], "fieldFilters": [{"event": "EXECUTION_COMPLETED",'
        f' "path": "outcome", "op": "eq", "value": {value}}}]}}'
    )
    path = f"/agents/{agent}/webhooks/{integration}"
    response = api.request("PUT", path, content=body, headers={"Content-Type": "application/json"})
    assert_error(response, 400, "fieldFilters")
    assert api.get(f"/webhook-integrations/{integration}/attachments").json()["total"] == 0
