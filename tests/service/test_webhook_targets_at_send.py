"""What the runner does with a target it may not, or cannot, connect to: the attempt
says why, and a URL that cannot be sent at all fails its delivery at once (before:
`httpx.InvalidURL` escaped the sender, the delivery stayed pending with 0 attempts
and the runner logged it forever). Names are resolved by an injected resolver."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI

from agentform.service import create_app
from agentform.service.runtime import ManualClock
from agentform.service.settings import ServiceSettings
from tests.service.conftest import TEST_SEED, Api, running
from tests.service.test_webhook_delivery import emit
from tests.webhooks.receiver import running_receiver

ANSWERS: dict[str, list[str]] = {}


async def resolve(host: str, port: int) -> list[str]:
    return ANSWERS.get(host, [])


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FastAPI, Api, Any]]:
    path = tmp_path_factory.mktemp("targets") / "service.db"
    settings = ServiceSettings(webhook_resolver=resolve)
    app = create_app(path, seed=TEST_SEED, clock=ManualClock(), settings=settings)
    with running(app) as (api, advance):
        yield app, api, advance
    app.state.db.close()


def _hook(api: Api, url: str) -> str:
    made = api.post("/webhook-integrations", json={"name": uuid.uuid4().hex, "url": url})
    assert made.status_code == 201, made.text
    hook = str(made.json()["id"])
    agent = api.ids("/agents")["checkout-agent"]
    api.request("PUT", f"/agents/{agent}/webhooks/{hook}", json={"eventRules": ["*"]})
    return hook


def _deliveries(api: Api, hook: str) -> list[dict[str, Any]]:
    return api.get(f"/webhook-integrations/{hook}/deliveries").json()["items"]  # type: ignore[no-any-return]


def test_a_name_rebound_after_saving_is_refused_at_send_and_says_why(
    service: tuple[FastAPI, Api, Any],
) -> None:
    app, api, advance = service
    with running_receiver() as receiver:
        receiver.keep_alive = False  # each delivery connects (and resolves) anew
        port = receiver.server.server_address[1]
        ANSWERS["rebind.test"] = ["127.0.0.1"]
        hook = _hook(api, f"http://rebind.test:{port}/hook")
        emit(app, api.ids("/agents")["checkout-agent"], "EXECUTION_FAILED", {"reason": "x"})
        advance(0)
        receiver.wait_for(1)
        advance(0)
        assert _deliveries(api, hook)[0]["status"] == "delivered"
        ANSWERS["rebind.test"] = ["169.254.169.254"]  # the tenant's name, pointed elsewhere
        emit(app, api.ids("/agents")["checkout-agent"], "EXECUTION_FAILED", {"reason": "y"})
        for seconds in (0, 1, 2):
            advance(seconds)
        [_, refused] = _deliveries(api, hook)
        assert len(receiver.received) == 1
    assert (refused["status"], refused["attempts"]) == ("failed", 3)
    assert "rebind.test points at 169.254.169.254" in refused["lastError"]


def test_a_stored_url_the_sender_cannot_read_fails_its_delivery_at_once(
    service: tuple[FastAPI, Api, Any],
) -> None:
    app, api, advance = service
    hook = _hook(api, "http://stored.test/hook")
    with app.state.db.write() as conn:  # as a release before the URL rule stored it
        conn.execute(
            "UPDATE webhook_integrations SET url = ? WHERE id = ?",
            ("http://\u2460\u2461\u2466.0.0.\u2460:8080/", hook),
        )
    emit(app, api.ids("/agents")["checkout-agent"], "EXECUTION_FAILED", {"reason": "x"})
    advance(0)
    [failed] = _deliveries(api, hook)
    assert (failed["status"], failed["attempts"]) == ("failed", 1)
    assert failed["lastError"].startswith("cannot be sent to this URL (Invalid IDNA hostname")
