"""BATCH_STARTED and BATCH_COMPLETED reach a receiver on loopback through the outbox,
signed, in the batch envelope (docs/service/contract.md#batch-notification-envelope),
and the documentation receiver
`/webhooks/example-batch` accepts them (204)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi import FastAPI

from agentform.rules.signatures import SIGNATURE_HEADER, verify
from agentform.service.settings import ServiceSettings
from tests.service.batches.support import at, batch_body, create, get
from tests.service.conftest import Api
from tests.webhooks.receiver import Receiver, running_receiver

PLATFORM = "https://platform.example/agents/v2"
SETTINGS = ServiceSettings(platform_url=PLATFORM)
Advance = Callable[[float], None]


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    with running_receiver() as rx:
        yield rx


def _hook(api: Api, url: str, agent_id: str, rules: list[str]) -> str:
    made = api.post("/webhook-integrations", json={"name": f"h-{uuid.uuid4().hex[:6]}", "url": url})
    assert made.status_code == 201, made.text
    integration: str = made.json()["id"]
    put = api.request(
        "PUT", f"/agents/{agent_id}/webhooks/{integration}", json={"eventRules": rules}
    )
    assert put.status_code == 200, put.text
    return integration


def test_batch_events_are_delivered_signed_in_the_batch_envelope(
    app: FastAPI, svc: tuple[Api, Advance], receiver: Receiver
) -> None:
    api, advance = svc
    agents = api.ids("/agents")
    agent = agents["instant"]
    _hook(api, receiver.url, agent, ["BATCH_STARTED", "BATCH_COMPLETED"])
    one_a_minute = {"type": "timeBatching", "batchSize": 1, "batchInterval": 60}
    batch = create(
        api,
        batch_body(agent, "nightly-é", startAt=at(app, 30), config=one_a_minute, items=[{}] * 2),
    )
    advance(30)
    started = receiver.wait_for(1)
    advance(60)
    received = receiver.wait_for(2)
    assert get(api, batch["id"])["status"] == "completed"
    # Only the batch events: the executions it started emit their own, not attached here.
    assert [r.event for r in received] == ["BATCH_STARTED", "BATCH_COMPLETED"]
    assert received[0] == started[0]
    key = api.get("/webhook-signing-key").json()["publicKeyPem"]
    common = {
        "agent_id": agent,
        "agent_name": "instant",
        "batch_id": batch["id"],
        "batch_name": "nightly-é",
        "batch_url": f"{PLATFORM}/agents/{agent}/batch",
    }
    payloads: list[dict[str, Any]] = [
        {"batch_id": batch["id"], "batch_name": "nightly-é", "item_count": 2},
        {
            "batch_id": batch["id"],
            "batch_name": "nightly-é",
            "item_count": 2,
            "triggered_count": 2,
            "cancelled_count": 0,
        },
    ]
    for got, event, payload in zip(
        received, ["BATCH_STARTED", "BATCH_COMPLETED"], payloads, strict=True
    ):
        assert verify(got.body, got.headers[SIGNATURE_HEADER], key)  # the raw bytes, as sent
        body = got.json()
        assert set(body) == {"type", "event_id", "timestamp", "info"}
        assert body["type"] == "execution_batch"
        uuid.UUID(body["event_id"])
        assert body["timestamp"].endswith("Z")
        assert body["info"] == {"event": event, **common, "payload": payload}
        # The documentation receiver takes it as sent, and refuses it unsigned or altered.
        signature = {SIGNATURE_HEADER: got.headers[SIGNATURE_HEADER]}
        example = api.client.post("/webhooks/example-batch", content=got.body, headers=signature)
        assert example.status_code == 204, example.text
        altered = got.body.replace(b"nightly", b"daily")
        refused = api.client.post("/webhooks/example-batch", content=altered, headers=signature)
        assert refused.status_code == 401
        assert api.client.post("/webhooks/example-batch", content=got.body).status_code == 401
    assert received[0].json()["timestamp"] < received[1].json()["timestamp"]


def test_a_batch_event_goes_only_to_attachments_that_ask_for_it(
    app: FastAPI, svc: tuple[Api, Advance]
) -> None:
    api, advance = svc
    agent = api.ids("/agents")["worker"]
    with running_receiver() as wants_start, running_receiver() as wants_executions:
        _hook(api, wants_start.url, agent, ["BATCH_STARTED"])
        _hook(api, wants_executions.url, agent, ["EXECUTION_STARTED"])
        create(api, batch_body(agent, "filtered", startAt=at(app, 0)))
        advance(0)
        assert [r.event for r in wants_start.wait_for(1)] == ["BATCH_STARTED"]
        assert [r.event for r in wants_executions.wait_for(1)] == ["EXECUTION_STARTED"]
        advance(200)  # the execution completes; BATCH_COMPLETED was sent at the trigger
        assert wants_start.events() == ["BATCH_STARTED"]
        assert wants_executions.events() == ["EXECUTION_STARTED"]
