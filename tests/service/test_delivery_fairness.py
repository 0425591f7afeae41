"""Fair delivery (docs/service/internals.md#fair-delivery): one organization's
receivers that never answer hold back none of another organization's deliveries,
and a failing receiver is not retried faster than its backoff; on a manual clock,
receivers on loopback."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from fastapi import FastAPI

from agentform.service.clock import MANUAL_START
from agentform.service.runtime import ManualClock
from agentform.service.settings import ServiceSettings
from agentform.service.store.events import append_event
from tests.service.conftest import ACME, OTHER, OTHER_KEY, TEST_SEED, Api, running
from tests.service.templates import seeded_app
from tests.webhooks.receiver import HANG, Receiver, running_receiver

SETTINGS = ServiceSettings(platform_url="https://platform.example", webhook_test_wait_seconds=0)
DEAD_INTEGRATIONS = 40
HEALTHY_DELIVERIES = 30


def emit(app: FastAPI, org: str, agent_id: str, event: str = "EXECUTION_STARTED") -> None:
    with app.state.db.write() as conn:
        append_event(
            conn,
            organization_id=org,
            agent_id=agent_id,
            event=event,
            payload={},
            execution_id=str(uuid.uuid4()),
        )


def attach(api: Api, url: str, agent_id: str) -> str:
    made = api.post("/webhook-integrations", json={"name": f"h-{uuid.uuid4().hex[:8]}", "url": url})
    assert made.status_code == 201, made.text
    integration = str(made.json()["id"])
    put = api.request(
        "PUT", f"/agents/{agent_id}/webhooks/{integration}", json={"eventRules": ["*"]}
    )
    assert put.status_code == 200, put.text
    return integration


@pytest.fixture(scope="module")
def receivers() -> Iterator[tuple[Receiver, Receiver]]:
    with running_receiver(default=HANG) as dead, running_receiver() as healthy:
        yield dead, healthy


def until(done: Callable[[], bool], advance: Callable[[float], None], bound: float = 120) -> None:
    """Runs what is due (`advance(0)`: the clock does not move) until `done()`; real
    I/O takes what it takes, up to `bound` real seconds."""
    give_up = time.monotonic() + bound
    while not done() and time.monotonic() < give_up:
        advance(0)


def statuses(app: FastAPI, integration: str) -> list[str]:
    with app.state.db.read() as conn:
        rows = conn.execute(
            "SELECT status FROM webhook_deliveries WHERE integration_id = ?", (integration,)
        )
        return [r[0] for r in rows]


def test_a_tenant_whose_receivers_never_answer_holds_back_no_one_else(
    tmp_path: Any, receivers: tuple[Receiver, Receiver]
) -> None:
    dead, healthy = receivers
    app = seeded_app(
        tmp_path / "s.db", seed=TEST_SEED, clock=ManualClock(settle=0.2), settings=SETTINGS
    )
    with running(app) as (api, advance):
        hostile = api.as_key(OTHER_KEY)
        hostile_agent = hostile.ids("/agents")["other-agent"]
        for _ in range(DEAD_INTEGRATIONS):
            attach(hostile, dead.url, hostile_agent)
        fine = attach(api, healthy.url, api.ids("/agents")["checkout-agent"])
        for _ in range(5):  # 200 lanes of the hostile tenant, all due before the others'
            emit(app, OTHER, hostile_agent)
        advance(0)
        for _ in range(HEALTHY_DELIVERIES):
            emit(app, ACME, api.ids("/agents")["checkout-agent"])
        advance(0)
        advance(1)
        advance(1)
        # The clock stays put from here: what is left is real I/O, waited for as long as
        # it takes (the bound only keeps a broken service from hanging the suite).
        delivered = ["delivered"] * HEALTHY_DELIVERIES
        until(lambda: statuses(app, fine) == delivered, advance)
        assert statuses(app, fine) == delivered
        assert app.state.clock.now() - MANUAL_START <= timedelta(seconds=2)
        assert len(healthy.received) == HEALTHY_DELIVERIES
    app.state.db.close()


def test_five_failed_deliveries_in_a_row_mark_the_integration_failing_until_one_succeeds(
    tmp_path: Any,
) -> None:
    app = seeded_app(
        tmp_path / "s.db", seed=TEST_SEED, clock=ManualClock(settle=0.2), settings=SETTINGS
    )
    with running_receiver(default=500) as rx, running(app) as (api, advance):
        agent = api.ids("/agents")["checkout-agent"]
        hook = attach(api, rx.url, agent)
        for _ in range(5):
            emit(app, ACME, agent)
        for seconds in (0, 1, 2):
            advance(seconds)
        rx.wait_for(15)
        advance(0)
        assert statuses(app, hook) == ["failed"] * 5
        health = api.get(f"/webhook-integrations/{hook}").json()["health"]
        assert health["status"] == "failing" and health["consecutiveFailures"] == 5
        assert health["failingSince"]

        # Failing: one attempt at a time, 30 s apart, new deliveries included.
        emit(app, ACME, agent)
        emit(app, ACME, agent)
        advance(29)
        assert len(rx.received) == 15
        advance(1)
        rx.wait_for(16)
        advance(0)
        assert len(rx.received) == 16
        advance(29)
        assert len(rx.received) == 16

        # A test is sent at once; its success clears the mark.
        rx.default = 204
        tested = api.post(f"/webhook-integrations/{hook}/test")
        assert tested.json()["integrationHealth"]["status"] == "failing"
        advance(0)
        rx.wait_for(17)
        advance(0)
        health = api.get(f"/webhook-integrations/{hook}").json()["health"]
        assert health == {"status": "healthy", "consecutiveFailures": 0, "failingSince": None}
    app.state.db.close()


def test_a_batch_notification_keeps_its_event_id_on_every_attempt(tmp_path: Any) -> None:
    app = seeded_app(tmp_path / "s.db", seed=TEST_SEED, clock=ManualClock(), settings=SETTINGS)
    with running_receiver() as rx, running(app) as (api, advance):
        agent = api.ids("/agents")["checkout-agent"]
        attach(api, rx.url, agent)
        rx.answer(500, 500)
        batch = str(uuid.uuid4())
        with app.state.db.write() as conn:
            append_event(
                conn,
                organization_id=ACME,
                agent_id=agent,
                event="BATCH_STARTED",
                payload={"batch_id": batch, "batch_name": "nightly", "item_count": 2},
                batch_id=batch,
            )
        for attempt, seconds in enumerate((0, 1, 2), start=1):
            advance(seconds)
            rx.wait_for(attempt)
        advance(0)
        ids = {r.json()["event_id"] for r in rx.received}
    assert len(rx.received) == 3 and len(ids) == 1
    app.state.db.close()
