"""Webhook integrations, attachments, the signing key and the example receiver
(docs/service/contract.md#webhook-integrations), through HTTP on one in-process app for
the module."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agentform.rules.signatures import load_public_key, sign, verify
from agentform.rules.webhook_integrations import header_digest
from agentform.service import create_app
from tests.service.conftest import (
    ACME,
    ADMIN_KEY,
    OTHER_KEY,
    READ_KEY,
    TEST_SEED,
    Api,
    assert_error,
)

CANARY = "Bearer canary-3f9a1c-never-shown"
_names = count(1)


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    app = create_app(tmp_path_factory.mktemp("webhooks") / "service.db", seed=TEST_SEED)
    with TestClient(app) as client:
        yield Api(client)
    app.state.db.close()


@pytest.fixture(scope="module")
def agents(api: Api) -> dict[str, str]:
    return api.ids("/agents")


def new_integration(api: Api, **body: object) -> dict:  # type: ignore[type-arg]
    body = {"name": f"hook-{next(_names)}", "url": "https://hooks.example.com/in", **body}
    response = api.post("/webhook-integrations", json=body)
    assert response.status_code == 201, response.text
    return response.json()  # type: ignore[no-any-return]


# -- integrations -------------------------------------------------------------------


def test_create_answers_the_integration_with_header_digests(api: Api) -> None:
    created = new_integration(api, headers={"Authorization": CANARY, "X-Team": "payments"})
    assert created["organizationId"] == ACME
    assert created["payloadVersion"] == "v2"
    assert created["url"] == "https://hooks.example.com/in"
    assert created["createdAt"] == created["updatedAt"] and created["createdAt"].endswith("Z")
    assert created["headers"] == {
        "Authorization": {"digest": header_digest(created["id"], "Authorization", CANARY)},
        "X-Team": {"digest": header_digest(created["id"], "X-Team", "payments")},
    }
    assert api.get(f"/webhook-integrations/{created['id']}").json() == created


def test_header_values_are_never_answered(api: Api) -> None:
    created = new_integration(api, headers={"Authorization": CANARY})
    path = f"/webhook-integrations/{created['id']}"
    answers = [
        api.get(path),
        api.get("/webhook-integrations", params={"pageSize": 100}),
        api.patch(path, json={"headers": {"Authorization": CANARY, "X-More": CANARY}}),
        api.post(
            "/webhook-integrations",
            json={"name": "x", "url": "ftp://x", "headers": {"Authorization": CANARY + "\n"}},
        ),
    ]
    for answer in answers:
        assert "canary" not in answer.text


def test_payload_version_v2_is_accepted_and_anything_else_refused(api: Api) -> None:
    assert new_integration(api, payloadVersion="v2")["payloadVersion"] == "v2"
    response = api.post(
        "/webhook-integrations",
        json={"name": "v1", "url": "https://h.example", "payloadVersion": "v1"},
    )
    assert_error(response, 400, "only the V2 payload format is accepted")


@pytest.mark.parametrize(
    ("body", "parameter"),
    [
        ({"name": "", "url": "https://h.example"}, "name"),
        ({"name": "x" * 201, "url": "https://h.example"}, "name"),
        ({"name": "n", "url": "mailto:a@b.example"}, "url"),
        ({"name": "n", "url": "//h.example/x"}, "url"),
        ({"name": "n"}, "url"),
        ({"name": "n", "url": "https://h.example", "headers": {"Host": "h"}}, "headers.Host"),
        (
            {"name": "n", "url": "https://h.example", "headers": {"Bad Name": "v"}},
            "headers.Bad Name",
        ),
        ({"name": "n", "url": "https://h.example", "headers": {"X": 1}}, "headers.X"),
        (
            {
                "name": "n",
                "url": "https://h.example",
                "headers": {f"X-{i}": "v" for i in range(21)},
            },
            "headers",
        ),
        ({"name": "n", "url": "https://h.example", "secret": "s"}, "secret"),
    ],
)
def test_create_refuses_bad_bodies(api: Api, body: dict, parameter: str) -> None:  # type: ignore[type-arg]
    error = assert_error(api.post("/webhook-integrations", json=body), 400)
    assert parameter in [e["parameter"] for e in error["errors"]]


@pytest.mark.parametrize("name", ["Content-Type", "content-length", "Host", "X-Service-Signature"])
def test_headers_the_service_sets_are_refused(api: Api, name: str) -> None:
    response = api.post(
        "/webhook-integrations",
        json={"name": "n", "url": "https://h.example", "headers": {name: "v"}},
    )
    assert_error(response, 400, "set by the service")


@pytest.mark.parametrize("name", ["Transfer-Encoding", "Connection", "Proxy-Authorization"])
def test_framing_and_hop_by_hop_headers_are_refused(api: Api, name: str) -> None:
    response = api.post(
        "/webhook-integrations",
        json={"name": "n", "url": "https://h.example", "headers": {name: "chunked"}},
    )
    assert_error(response, 400, "hop-by-hop or framing header")
    assert all(i["name"] != "n" for i in api.get("/webhook-integrations").json()["items"])


def test_names_are_unique_in_the_organization(api: Api) -> None:
    first = new_integration(api)
    again = {"name": first["name"], "url": "https://h.example"}
    assert_error(api.post("/webhook-integrations", json=again), 409, "already exists")
    second = new_integration(api)
    rename = api.patch(f"/webhook-integrations/{second['id']}", json={"name": first["name"]})
    assert_error(rename, 409)
    other = api.as_key(OTHER_KEY).post("/webhook-integrations", json=again)
    assert other.status_code == 201  # another organization may use the name


def test_another_organizations_integration_is_not_found(api: Api) -> None:
    created = new_integration(api)
    path = f"/webhook-integrations/{created['id']}"
    other = api.as_key(OTHER_KEY)
    assert_error(other.get(path), 404)
    assert_error(other.patch(path, json={"name": "mine"}), 404)
    assert_error(other.delete(path), 404)
    assert_error(other.post(path + "/test"), 404)
    assert created["id"] not in other.ids("/webhook-integrations").values()


def test_organization_id_must_be_the_callers(api: Api) -> None:
    body = {"name": "n-org", "url": "https://h.example", "organizationId": str(uuid.uuid4())}
    assert_error(api.post("/webhook-integrations", json=body), 403)
    assert_error(
        api.get("/webhook-integrations", params={"organizationId": str(uuid.uuid4())}), 403
    )


def test_a_read_key_reads_but_does_not_write(api: Api) -> None:
    created = new_integration(api)
    reader = api.as_key(READ_KEY)
    assert reader.get(f"/webhook-integrations/{created['id']}").status_code == 200
    assert_error(reader.post("/webhook-integrations", json={"name": "r", "url": "https://h"}), 403)
    assert_error(reader.delete(f"/webhook-integrations/{created['id']}"), 403)


def test_list_pages_and_search(api: Api) -> None:
    marker = f"searchable-{uuid.uuid4().hex[:8]}"
    made = [new_integration(api, name=f"{marker}-{i}") for i in range(3)]
    page = api.get("/webhook-integrations", params={"searchName": marker.upper(), "pageSize": 2})
    body = page.json()
    assert body["total"] == 3 and body["pageSize"] == 2
    assert [i["id"] for i in body["items"]] == [m["id"] for m in made[:2]]
    page2 = api.get(
        "/webhook-integrations", params={"searchName": marker, "pageSize": 2, "page": 2}
    )
    assert [i["id"] for i in page2.json()["items"]] == [made[2]["id"]]


def test_patch_changes_only_what_it_names(api: Api) -> None:
    created = new_integration(api, headers={"A": "1"})
    path = f"/webhook-integrations/{created['id']}"
    renamed = api.patch(path, json={"url": "http://127.0.0.1:9/x"}).json()
    assert renamed["url"] == "http://127.0.0.1:9/x"
    assert renamed["name"] == created["name"] and renamed["headers"] == created["headers"]
    assert renamed["updatedAt"] > created["updatedAt"]


def test_patch_headers_replaces_the_whole_map(api: Api) -> None:
    created = new_integration(api, headers={"A": "1", "B": "2"})
    path = f"/webhook-integrations/{created['id']}"
    patched = api.patch(path, json={"headers": {"B": "3", "C": "4"}}).json()
    assert set(patched["headers"]) == {"B", "C"}
    assert patched["headers"]["B"]["digest"] == header_digest(created["id"], "B", "3")
    cleared = api.patch(path, json={"headers": {}}).json()
    assert cleared["headers"] == {}


@pytest.mark.parametrize(
    ("body", "parameter"),
    [
        ({"payloadVersion": "v2"}, "payloadVersion"),
        ({"name": None}, "name"),
        ({"url": "nope"}, "url"),
        ({"headers": {"Content-Type": "x"}}, "headers.Content-Type"),
    ],
)
def test_patch_refuses_bad_bodies_and_changes_nothing(api: Api, body: dict, parameter: str) -> None:  # type: ignore[type-arg]
    created = new_integration(api)
    path = f"/webhook-integrations/{created['id']}"
    error = assert_error(api.patch(path, json=body), 400)
    assert parameter in [e["parameter"] for e in error["errors"]]
    assert api.get(path).json() == created


def test_delete_removes_the_integration_and_its_attachments(
    api: Api, agents: dict[str, str]
) -> None:
    created = new_integration(api)
    agent = agents["checkout-agent"]
    attach = f"/agents/{agent}/webhooks/{created['id']}"
    assert api.request("PUT", attach, json={"eventRules": ["*"]}).status_code == 200
    assert api.delete(f"/webhook-integrations/{created['id']}").status_code == 204
    assert_error(api.get(f"/webhook-integrations/{created['id']}"), 404)
    listed = api.get(f"/agents/{agent}/webhooks", params={"pageSize": 100}).json()["items"]
    assert created["id"] not in [a["integrationId"] for a in listed]
    assert_error(api.delete(f"/webhook-integrations/{created['id']}"), 404)


def test_a_malformed_id_is_400(api: Api) -> None:
    assert_error(api.get("/webhook-integrations/not-a-uuid"), 400)
    assert_error(api.request("PUT", "/agents/x/webhooks/y", json={"eventRules": ["*"]}), 400)


# -- attachments ---------------------------------------------------------------------


def test_put_creates_then_replaces_an_attachment(api: Api, agents: dict[str, str]) -> None:
    integration = new_integration(api)
    path = f"/agents/{agents['checkout-agent']}/webhooks/{integration['id']}"
    created = api.request("PUT", path, json={"eventRules": ["EXECUTION_COMPLETED"]})
    assert created.status_code == 200
    first = created.json()
    assert first == {
        "agentId": agents["checkout-agent"],
        "integrationId": integration["id"],
        "eventRules": ["EXECUTION_COMPLETED"],
        "fieldFilters": [],
        "metadataFilter": {},
        "unwrapResult": False,
        "createdAt": first["createdAt"],
        "updatedAt": first["createdAt"],
    }
    settings = {
        "eventRules": ["EXECUTION_COMPLETED", "EXECUTION_FAILED"],
        "fieldFilters": [
            {"event": "EXECUTION_COMPLETED", "path": "outcome", "op": "eq", "value": "success"},
            {"event": "EXECUTION_FAILED", "path": "os_error.message", "op": "exists"},
        ],
        "metadataFilter": {"team": "payments"},
        "unwrapResult": True,
    }
    replaced = api.request("PUT", path, json=settings).json()
    assert {k: replaced[k] for k in settings} == settings
    assert (
        replaced["createdAt"] == first["createdAt"] and replaced["updatedAt"] > first["updatedAt"]
    )
    # A PUT replaces: what it leaves out goes back to the defaults.
    again = api.request("PUT", path, json={"eventRules": ["*"]}).json()
    assert again["fieldFilters"] == [] and again["metadataFilter"] == {}
    assert again["unwrapResult"] is False


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ({}, "eventRules"),
        ({"eventRules": []}, "eventRules"),
        ({"eventRules": ["EXECUTION_TEST"]}, "cannot be attached"),
        ({"eventRules": ["EXECUTION_COMPLETE"]}, "did you mean 'EXECUTION_COMPLETED'"),
        ({"eventRules": ["*", "EXECUTION_FAILED"]}, "stands alone"),
        ({"eventRules": ["*"], "metadataFilter": {"a": 1}}, "metadataFilter"),
        (
            {
                "eventRules": ["EXECUTION_FAILED"],
                "fieldFilters": [
                    {"event": "EXECUTION_COMPLETED", "path": "outcome", "op": "exists"}
                ],
            },
            "eventRules does not include",
        ),
        (
            {
                "eventRules": ["*"],
                "fieldFilters": [
                    {"event": "EXECUTION_COMPLETED", "path": "outcome", "op": "in", "value": "x"}
                ],
            },
            "non-empty list",
        ),
        ({"eventRules": ["*"], "unwrap": True}, "unwrap: unknown field"),
    ],
)
def test_put_refuses_bad_settings(
    api: Api, agents: dict[str, str], settings: dict[str, Any], words: str
) -> None:
    integration = new_integration(api)
    path = f"/agents/{agents['checkout-agent']}/webhooks/{integration['id']}"
    assert_error(api.request("PUT", path, json=settings), 400, words)
    assert api.get(f"/webhook-integrations/{integration['id']}/attachments").json()["total"] == 0


def test_attachments_need_an_agent_and_an_integration_of_the_organization(
    api: Api, agents: dict[str, str]
) -> None:
    integration = new_integration(api)
    other_agent = api.as_key(OTHER_KEY).ids("/agents")["other-agent"]
    body = {"eventRules": ["*"]}
    assert_error(
        api.request("PUT", f"/agents/{other_agent}/webhooks/{integration['id']}", json=body),
        404,
        "agent",
    )
    missing = str(uuid.uuid4())
    assert_error(
        api.request("PUT", f"/agents/{agents['support-agent']}/webhooks/{missing}", json=body),
        404,
        "integration",
    )


def test_both_attachment_lists(api: Api, agents: dict[str, str]) -> None:
    one, two = new_integration(api), new_integration(api)
    support = agents["support-agent"]
    for integration in (one, two):
        api.request(
            "PUT",
            f"/agents/{support}/webhooks/{integration['id']}",
            json={"eventRules": ["EXECUTION_FAILED"]},
        )
    api.request(
        "PUT",
        f"/agents/{agents['checkout-agent']}/webhooks/{one['id']}",
        json={"eventRules": ["*"]},
    )
    of_one = api.get(f"/webhook-integrations/{one['id']}/attachments").json()
    assert of_one["total"] == 2
    assert [a["agentId"] for a in of_one["items"]] == [support, agents["checkout-agent"]]
    of_agent = api.get(f"/agents/{support}/webhooks", params={"pageSize": 100}).json()["items"]
    assert [one["id"], two["id"]] == [
        a["integrationId"] for a in of_agent if a["integrationId"] in (one["id"], two["id"])
    ]


def test_delete_an_attachment(api: Api, agents: dict[str, str]) -> None:
    integration = new_integration(api)
    path = f"/agents/{agents['support-agent']}/webhooks/{integration['id']}"
    api.request("PUT", path, json={"eventRules": ["*"]})
    assert api.delete(path).status_code == 204
    assert api.get(f"/webhook-integrations/{integration['id']}/attachments").json()["total"] == 0
    assert_error(api.delete(path), 404, "not attached to this agent")


# -- the signing key and the example receiver -----------------------------------------


def test_each_organization_has_one_stable_rsa_2048_key(api: Api) -> None:
    first = api.get("/webhook-signing-key").json()
    assert first["algorithm"] == "RSA-PKCS1v15-SHA256"
    assert first["keyId"].startswith("sha256:")
    assert load_public_key(first["publicKeyPem"]).key_size == 2048
    assert api.as_key(READ_KEY).get("/webhook-signing-key").json() == first
    other = api.as_key(OTHER_KEY).get("/webhook-signing-key").json()
    assert other["keyId"] != first["keyId"]
    assert "PRIVATE" not in str(first) + str(other)


def test_the_signing_key_survives_a_restart(tmp_path: Path) -> None:
    app = create_app(tmp_path / "s.db", seed=TEST_SEED)
    first = TestClient(app).get("/agents/v2/webhook-signing-key", headers={"X-Api-Key": ADMIN_KEY})
    app.state.db.close()
    app = create_app(tmp_path / "s.db", seed=TEST_SEED)
    again = TestClient(app).get("/agents/v2/webhook-signing-key", headers={"X-Api-Key": ADMIN_KEY})
    app.state.db.close()
    assert first.json() == again.json()


def private_key_of(api: Api, organization_id: str) -> str:
    """The organization's private key, read from the database (as the sender does)."""
    from agentform.service.store import webhooks

    app = api.client.app
    with app.state.db.read() as conn:  # type: ignore[attr-defined]
        pair = webhooks.signing_key(conn, organization_id)
    assert pair is not None
    return pair.private_pem


def test_example_batch_receiver_answers_204_to_a_signed_body(api: Api) -> None:
    public = api.get("/webhook-signing-key").json()["publicKeyPem"]
    body = b'{"type":"execution_batch","event_id":"e","info":{"batch_id":"b"}}'
    signature = sign(body, private_key_of(api, ACME))
    assert verify(body, signature, public)
    response = api.client.post(
        "/webhooks/example-batch", content=body, headers={"X-Service-Signature": signature}
    )
    assert response.status_code == 204 and response.content == b""


def test_example_batch_receiver_refuses_missing_or_wrong_signatures(api: Api) -> None:
    api.get("/webhook-signing-key")
    body = b'{"type":"execution_batch"}'
    missing = api.client.post("/webhooks/example-batch", content=body)
    assert_error(missing, 401, "missing X-Service-Signature")
    signature = sign(body, private_key_of(api, ACME))
    changed = api.client.post(
        "/webhooks/example-batch", content=body + b" ", headers={"X-Service-Signature": signature}
    )
    assert_error(changed, 401, "invalid X-Service-Signature")


def test_example_batch_receiver_is_outside_the_api_base(api: Api) -> None:
    assert_error(api.post("/webhooks/example-batch", content=b"{}"), 404)


def test_example_batch_receiver_refuses_a_body_over_1_mib(api: Api) -> None:
    body = b"x" * (1024 * 1024 + 1)
    response = api.client.post(
        "/webhooks/example-batch", content=body, headers={"X-Service-Signature": "AAAA"}
    )
    assert_error(response, 400, "larger than")
