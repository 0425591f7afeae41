"""Any httpx transport can carry webhook deliveries (`webhook_transport`), whatever
kind of response it answers with.

Before: a response built with `content=` (as `httpx.MockTransport` handlers and
most hand-written transports build one) comes with its body already read, so the
sender's raw read raised `httpx.StreamConsumed`: the lane's job failed, the
delivery stayed pending with no attempt recorded, and nothing sent it again.
Only a response built with `stream=httpx.ByteStream(...)` was delivered.
"""

from __future__ import annotations

import gzip
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentform.service import create_app
from agentform.service.runtime import ManualClock
from agentform.service.settings import ServiceSettings
from tests.service.conftest import ACME, READ_KEY, TEST_SEED, running
from tests.service.test_delivery_fairness import SETTINGS, emit

ANSWERS: dict[str, tuple[Callable[[], httpx.Response], str, str | None, str]] = {
    # how the receiver answers -> (status, lastError, responseHead) of the delivery
    "no body": (lambda: httpx.Response(204), "delivered", None, ""),
    "content": (
        lambda: httpx.Response(200, content=b'ok "\\ \xc3\xbc'),
        "delivered",
        None,
        'ok "\\ ü',
    ),
    "json": (lambda: httpx.Response(202, json={"ok": True}), "delivered", None, '{"ok":true}'),
    "text refused": (lambda: httpx.Response(500, text="nope"), "pending", "answered 500", "nope"),
    "gzip": (
        lambda: httpx.Response(
            200, content=gzip.compress(b"zipped"), headers={"Content-Encoding": "gzip"}
        ),
        "delivered",
        None,
        "zipped",
    ),
    "stream": (lambda: httpx.Response(200, stream=httpx.ByteStream(b"s")), "delivered", None, "s"),
}


def one_delivery(tmp_path: Path, settings: ServiceSettings) -> dict[str, Any]:
    """The delivery of one event to a webhook on a service with `settings`, after one
    pass on the manual clock, with its attempts as a read key lists them."""
    app = create_app(tmp_path / "s.db", seed=TEST_SEED, clock=ManualClock(), settings=settings)
    with running(app) as (api, advance):
        made = api.post(
            "/webhook-integrations",
            json={"name": uuid.uuid4().hex, "url": "https://hooks.example/h"},
        )
        hook = made.json()["id"]
        agent = api.ids("/agents")["checkout-agent"]
        api.request("PUT", f"/agents/{agent}/webhooks/{hook}", json={"eventRules": ["*"]})
        emit(app, ACME, agent, "EXECUTION_FAILED")
        advance(0)
        [delivery] = api.get(f"/webhook-integrations/{hook}/deliveries").json()["items"]
        [listed] = api.client.get(
            "/agentform/v1/webhook-deliveries",
            params={"integrationId": hook},
            headers={"X-Api-Key": READ_KEY},
        ).json()["items"]
    app.state.db.close()
    return {**delivery, "attempts": listed["attempts"]}


@pytest.mark.parametrize("answer", sorted(ANSWERS))
def test_a_transport_answering_any_kind_of_response_delivers(tmp_path: Path, answer: str) -> None:
    respond, status, error, head = ANSWERS[answer]
    transport = httpx.MockTransport(lambda request: respond())
    delivery = one_delivery(tmp_path, SETTINGS.model_copy(update={"webhook_transport": transport}))
    assert (delivery["status"], delivery["lastError"]) == (status, error)
    assert [attempt["responseHead"] for attempt in delivery["attempts"]] == [head]
