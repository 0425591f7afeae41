"""Webhook delivery end to end (docs/service/contract.md#webhook-integrations,
#signatures, #webhook-delivery): events appended with `append_event`, delivered by the
runner on a manual clock to a receiver on loopback, through one in-process app for the
module."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from agentform.rules.signatures import verify
from agentform.rules.webhook_events import EVENT_PAYLOAD_FIELDS, EXECUTION_EVENTS
from agentform.service import create_app
from agentform.service.delivery.fairness import TURN_DELIVERIES
from agentform.service.delivery.outbox import DELIVERY_JOB
from agentform.service.runtime import ManualClock
from agentform.service.settings import ServiceSettings
from agentform.service.store import jobs
from agentform.service.store.database import iso
from agentform.service.store.events import append_event
from tests.service.conftest import ACME, TEST_SEED, Api, assert_error, running
from tests.webhooks.receiver import HANG, Receiver, running_receiver

PLATFORM = "https://platform.example"
TOKEN = "Bearer delivery-token-7c1e"
SETTINGS = ServiceSettings(platform_url=PLATFORM, webhook_test_wait_seconds=0)


def emit(
    app: FastAPI,
    agent_id: str,
    event: str,
    payload: dict[str, Any] | None = None,
    execution: str | None = None,
    metadata: dict[str, str] | None = None,
    batch: str | None = None,
) -> str:
    """Appends an event as a state change would, in its own write transaction."""
    execution = execution or (None if batch else str(uuid.uuid4()))
    with app.state.db.write() as conn:
        append_event(
            conn,
            organization_id=ACME,
            agent_id=agent_id,
            event=event,
            payload=payload or {},
            execution_id=execution,
            batch_id=batch,
            metadata=metadata,
        )
    return execution or ""


@dataclass
class Service:
    app: FastAPI
    api: Api
    advance: Callable[[float], None]
    agents: dict[str, str]

    def emit(
        self,
        event: str,
        payload: dict[str, Any] | None = None,
        execution: str | None = None,
        agent: str = "checkout-agent",
        metadata: dict[str, str] | None = None,
        batch: str | None = None,
    ) -> str:
        return emit(self.app, self.agents[agent], event, payload, execution, metadata, batch)

    def deliveries(self, integration_id: str) -> list[dict[str, Any]]:
        page = self.api.get(
            f"/webhook-integrations/{integration_id}/deliveries", params={"pageSize": 100}
        )
        return page.json()["items"]  # type: ignore[no-any-return]

    def public_key(self) -> str:
        return str(self.api.get("/webhook-signing-key").json()["publicKeyPem"])


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    path = tmp_path_factory.mktemp("delivery") / "service.db"
    app = create_app(path, seed=TEST_SEED, clock=ManualClock(), settings=SETTINGS)
    with running(app) as (api, advance):
        yield Service(app, api, advance, api.ids("/agents"))
    app.state.db.close()


@contextmanager
def hooked(
    service: Service, agent: str = "checkout-agent", **settings: Any
) -> Iterator[tuple[Receiver, str]]:
    """A receiver, an integration pointing at it, attached to `agent` with `settings`
    (default: every event); removed afterwards so later tests do not see it."""
    with running_receiver() as rx:
        made = service.api.post(
            "/webhook-integrations",
            json={
                "name": f"hook-{uuid.uuid4().hex[:8]}",
                "url": rx.url,
                "headers": {"Authorization": TOKEN},
            },
        )
        integration = made.json()["id"]
        path = f"/agents/{service.agents[agent]}/webhooks/{integration}"
        put = service.api.request("PUT", path, json={"eventRules": ["*"], **settings})
        assert put.status_code == 200, put.text
        try:
            yield rx, integration
        finally:
            service.api.delete(f"/webhook-integrations/{integration}")


def sample_payload(event: str) -> dict[str, Any]:
    fields = EVENT_PAYLOAD_FIELDS[event]
    return {name: f"{name}-value" for name in (*fields.required, *fields.optional)}


# -- what arrives -------------------------------------------------------------------


def test_every_attached_event_arrives_in_order_signed_and_as_the_seed_says(
    service: Service,
) -> None:
    with hooked(service) as (rx, _):
        execution = str(uuid.uuid4())
        metadata = {"team": "payments", "order": "A-1"}
        for event in EXECUTION_EVENTS:
            service.emit(event, sample_payload(event), execution, metadata=metadata)
        service.advance(0)
        received = rx.wait_for(len(EXECUTION_EVENTS))
        public = service.public_key()
        with service.app.state.db.read() as conn:
            times = [
                r[0]
                for r in conn.execute(
                    "SELECT created_at FROM events WHERE execution_id = ? ORDER BY seq",
                    (execution,),
                )
            ]
    assert [r.event for r in received] == list(EXECUTION_EVENTS)
    event_ids = set()
    for got, event, at in zip(received, EXECUTION_EVENTS, times, strict=True):
        assert verify(got.body, got.headers["X-Service-Signature"], public)
        assert got.headers["Authorization"] == TOKEN
        assert got.headers["Content-Type"] == "application/json"
        body = got.json()
        assert set(body) == {"type", "event_id", "timestamp", "info"}
        assert body["type"] == "execution"
        assert str(uuid.UUID(body["event_id"])) == body["event_id"]
        event_ids.add(body["event_id"])
        assert body["timestamp"] == at
        assert body["info"] == {
            "event": event,
            "execution_id": execution,
            "execution_url": f"{PLATFORM}/executions/{execution}",
            "agent_id": service.agents["checkout-agent"],
            "agent_name": "checkout-agent",
            "metadata": metadata,
            "payload": sample_payload(event),
        }
    assert len(event_ids) == len(EXECUTION_EVENTS)


def test_signatures_cover_the_exact_bytes(service: Service) -> None:
    with hooked(service) as (rx, _):
        service.emit("EXECUTION_MESSAGE_ADDED", {"message": "prix: 12 € — ok"})
        service.advance(0)
        [got] = rx.wait_for(1)
    public = service.public_key()
    assert "12 €".encode() in got.body  # UTF-8 as sent
    assert verify(got.body, got.headers["X-Service-Signature"], public)
    assert not verify(got.body.replace(b"12", b"13"), got.headers["X-Service-Signature"], public)


def test_batch_events_use_the_batch_envelope(service: Service) -> None:
    with hooked(service) as (rx, _):
        batch = str(uuid.uuid4())
        payload = {"batch_id": batch, "batch_name": "nightly", "item_count": 2}
        service.emit("BATCH_STARTED", payload, batch=batch)
        service.advance(0)
        [got] = rx.wait_for(1)
    body = got.json()
    assert body["type"] == "execution_batch"
    agent = service.agents["checkout-agent"]
    assert body["info"] == {
        "event": "BATCH_STARTED",
        "agent_id": agent,
        "agent_name": "checkout-agent",
        "batch_id": batch,
        "batch_name": "nightly",
        "batch_url": f"{PLATFORM}/agents/{agent}/batch",
        "payload": payload,
    }


def test_only_the_ruled_events_are_sent(service: Service) -> None:
    with hooked(service, eventRules=["EXECUTION_COMPLETED", "EXECUTION_FAILED"]) as (rx, hook):
        execution = service.emit("EXECUTION_STARTED")
        service.emit("EXECUTION_FAILED", {"reason": "boom"}, execution)
        service.emit("EXECUTION_STEP_STARTED", {"step": 1}, execution)
        service.advance(0)
        rx.wait_for(1)
        service.advance(0)
        assert rx.events() == ["EXECUTION_FAILED"]
        assert [d["event"] for d in service.deliveries(hook)] == ["EXECUTION_FAILED"]


def test_only_events_of_the_attached_agent_are_sent(service: Service) -> None:
    with hooked(service, agent="support-agent") as (rx, _):
        service.emit("EXECUTION_STARTED", agent="checkout-agent")
        execution = service.emit("EXECUTION_STARTED", agent="support-agent")
        service.advance(0)
        [got] = rx.wait_for(1)
        service.advance(0)
        assert len(rx.received) == 1
    assert got.json()["info"]["execution_id"] == execution


def test_metadata_filter_sends_only_exact_matches(service: Service) -> None:
    with hooked(service, metadataFilter={"team": "payments"}) as (rx, hook):
        wanted = service.emit("EXECUTION_STARTED", metadata={"team": "payments", "x": "y"})
        service.emit("EXECUTION_STARTED", metadata={"team": "Payments"})
        service.emit("EXECUTION_STARTED", metadata={})
        service.emit("EXECUTION_STARTED")
        service.advance(0)
        rx.wait_for(1)
        service.advance(0)
        assert [r.json()["info"]["execution_id"] for r in rx.received] == [wanted]
        assert len(service.deliveries(hook)) == 1  # no delivery at all for the others


def test_field_filter_sends_only_matching_payloads(service: Service) -> None:
    rule = {"event": "EXECUTION_COMPLETED", "path": "result.total", "op": "in", "value": [10, 20]}
    with hooked(service, fieldFilters=[rule]) as (rx, _):
        completed = {"reasoning": "", "outcome": "success"}
        wanted = service.emit("EXECUTION_COMPLETED", {**completed, "result": {"total": 20}})
        service.emit("EXECUTION_COMPLETED", {**completed, "result": {"total": 30}})
        service.emit("EXECUTION_COMPLETED", {**completed, "result": {}})
        other = service.emit("EXECUTION_FAILED", {"reason": "unfiltered event"})
        service.advance(0)
        rx.wait_for(2)
        service.advance(0)
        sent = [(r.event, r.json()["info"]["execution_id"]) for r in rx.received]
    assert sorted(sent) == sorted([("EXECUTION_COMPLETED", wanted), ("EXECUTION_FAILED", other)])


def test_unwrap_result_sends_the_result_alone_for_completed(service: Service) -> None:
    with hooked(service, unwrapResult=True) as (rx, _):
        execution = service.emit("EXECUTION_STARTED")
        result = {"order": "A-1", "lines": [1, 2], "note": "ünïcode"}
        service.emit(
            "EXECUTION_COMPLETED",
            {"result": result, "reasoning": "r", "outcome": "success"},
            execution,
        )
        service.advance(0)
        started, completed = rx.wait_for(2)
    assert started.json()["info"]["event"] == "EXECUTION_STARTED"  # others keep the envelope
    assert completed.json() == result
    assert verify(completed.body, completed.headers["X-Service-Signature"], service.public_key())


def test_two_attachments_each_get_their_own_delivery(service: Service) -> None:
    with (
        hooked(service) as (rx_all, all_hook),
        hooked(service, eventRules=["EXECUTION_FAILED"]) as (rx_failed, failed_hook),
    ):
        execution = service.emit("EXECUTION_STARTED")
        service.emit("EXECUTION_FAILED", {"reason": "x"}, execution)
        service.advance(0)
        rx_all.wait_for(2)
        rx_failed.wait_for(1)
        service.advance(0)
        assert [d["event"] for d in service.deliveries(all_hook)] == [
            "EXECUTION_STARTED",
            "EXECUTION_FAILED",
        ]
        assert [d["event"] for d in service.deliveries(failed_hook)] == ["EXECUTION_FAILED"]
        assert rx_failed.events() == ["EXECUTION_FAILED"]


# -- attempts and retries ---------------------------------------------------------------


def test_failing_twice_then_204_is_delivered_after_3_attempts(service: Service) -> None:
    with hooked(service) as (rx, hook):
        rx.answer(500, 503)
        service.emit("EXECUTION_FAILED", {"reason": "x"})
        service.advance(0)
        rx.wait_for(1)
        service.advance(0.9)  # the retry waits about 1 s
        assert len(rx.received) == 1
        [pending] = service.deliveries(hook)
        assert (pending["status"], pending["attempts"], pending["lastResponseStatus"]) == (
            "pending",
            1,
            500,
        )
        service.advance(0.1)
        rx.wait_for(2)
        service.advance(1.9)  # then about 2 s
        assert len(rx.received) == 2
        service.advance(0.1)
        received = rx.wait_for(3)
        service.advance(0)
        [done] = service.deliveries(hook)
    assert (done["status"], done["attempts"], done["lastResponseStatus"]) == ("delivered", 3, 204)
    bodies = [r.json() for r in received]
    assert len({b["event_id"] for b in bodies}) == 3  # a new event_id each attempt
    assert done["eventId"] == bodies[-1]["event_id"]
    assert {b["timestamp"] for b in bodies} == {bodies[0]["timestamp"]}  # the event's time
    assert all(b["info"] == bodies[0]["info"] for b in bodies)


def test_a_retried_event_holds_back_the_later_events_of_its_execution(service: Service) -> None:
    with hooked(service) as (rx, _):
        rx.answer(500)
        execution = service.emit("EXECUTION_STARTED")
        service.emit("EXECUTION_STEP_STARTED", {"step": 1}, execution)
        service.advance(0)
        rx.wait_for(1)
        service.advance(0)
        assert rx.events() == ["EXECUTION_STARTED"]  # the step waits for the start
        other = service.emit("EXECUTION_STARTED")  # another execution is not held back
        service.advance(0)
        [_, got] = rx.wait_for(2)
        assert got.json()["info"]["execution_id"] == other
        service.advance(1)
        rx.wait_for(4)
        service.advance(0)
        assert rx.events()[2:] == ["EXECUTION_STARTED", "EXECUTION_STEP_STARTED"]


def test_a_failed_attempt_amid_a_lane_holds_back_the_rest_until_its_retry(
    service: Service,
) -> None:
    """A lane is sent in batches (service/delivery/sending.py): the batch stops at its
    first failed attempt, and what follows waits for that delivery's retry."""
    with hooked(service) as (rx, hook):
        rx.answer(204, 204, 500)
        execution = service.emit("EXECUTION_STARTED")
        for step in range(1, 5):
            service.emit("EXECUTION_STEP_STARTED", {"step": step}, execution)
        service.advance(0)
        rx.wait_for(3)
        service.advance(0)
        assert len(rx.received) == 3
        assert Counter(d["status"] for d in service.deliveries(hook)) == {
            "delivered": 2,
            "pending": 3,
        }
        service.advance(1)
        rx.wait_for(6)
        service.advance(0)
        assert [r.json()["info"]["payload"].get("step") for r in rx.received] == [
            None,
            1,
            2,
            2,
            3,
            4,
        ]
        assert {d["status"] for d in service.deliveries(hook)} == {"delivered"}


def test_an_attempt_is_recorded_at_the_moment_it_was_sent(service: Service) -> None:
    with hooked(service) as (rx, hook):
        rx.answer(HANG)
        sent_at = service.app.state.clock.now()
        service.emit("EXECUTION_FAILED", {"reason": "x"})
        service.advance(0)
        rx.wait_for(1)
        service.advance(10)  # the attempt times out, 10 s after it was sent
        with service.app.state.db.read() as conn:
            rows = conn.execute(
                "SELECT a.attempted_at FROM webhook_attempts a JOIN webhook_deliveries d "
                "ON d.id = a.delivery_id WHERE d.integration_id = ?",
                (hook,),
            )
            assert [r[0] for r in rows] == [iso(sent_at)]


def test_a_lane_gives_its_slot_back_after_a_turn(service: Service) -> None:
    """However long a lane's backlog, one job sends at most a turn of it before the
    fair scheduler chooses again (service/delivery/fairness.py)."""
    with hooked(service) as (rx, hook):
        execution = service.emit("EXECUTION_STARTED")
        for step in range(TURN_DELIVERIES + 7):
            service.emit("EXECUTION_STEP_STARTED", {"step": step}, execution)
        service.advance(0)
        rx.wait_for(TURN_DELIVERIES + 8)
        service.advance(0)
        with service.app.state.db.read() as conn:
            lane_jobs = [
                job
                for job in jobs.list_jobs(conn, kind=DELIVERY_JOB)
                if job.payload["integration"] == hook
            ]
    assert [job.status for job in lane_jobs] == ["done", "done"]


def test_always_failing_is_failed_after_exactly_3_attempts(service: Service) -> None:
    with hooked(service) as (rx, hook):
        rx.default = 500
        service.emit("EXECUTION_FAILED", {"reason": "x"})
        for attempt, seconds in enumerate((0, 1, 2), start=1):
            service.advance(seconds)
            rx.wait_for(attempt)
        service.advance(0)
        service.advance(60)
        assert len(rx.received) == 3
        [failed] = service.deliveries(hook)
    assert (failed["status"], failed["attempts"]) == ("failed", 3)
    assert failed["lastResponseStatus"] == 500 and failed["lastError"] == "answered 500"


def test_a_hanging_receiver_is_a_failed_attempt_after_the_timeout(service: Service) -> None:
    with hooked(service) as (rx, hook):
        rx.answer(HANG, 204)
        service.emit("EXECUTION_FAILED", {"reason": "x"})
        service.advance(0)
        rx.wait_for(1)
        service.advance(9)
        assert service.deliveries(hook)[0]["attempts"] == 0  # still waiting for an answer
        service.advance(1)  # 10 s on the clock: the attempt timed out
        [timed_out] = service.deliveries(hook)
        assert (timed_out["status"], timed_out["attempts"]) == ("pending", 1)
        assert timed_out["lastError"] == "no answer within 10 s"
        assert timed_out["lastResponseStatus"] is None
        service.advance(1)
        rx.wait_for(2)
        service.advance(0)
        [done] = service.deliveries(hook)
    assert (done["status"], done["attempts"]) == ("delivered", 2)


def test_a_refused_connection_is_a_failed_attempt(service: Service) -> None:
    with hooked(service) as (rx, hook):
        rx.close()  # nobody listens any more
        service.emit("EXECUTION_FAILED", {"reason": "x"})
        for seconds in (0, 1, 2):
            service.advance(seconds)
        [failed] = service.deliveries(hook)
    assert (failed["status"], failed["attempts"]) == ("failed", 3)
    assert failed["lastError"] == "could not deliver (ConnectError)"


def test_redirects_are_not_followed(service: Service) -> None:
    with hooked(service) as (rx, hook):
        rx.default = 302
        service.emit("EXECUTION_FAILED", {"reason": "x"})
        service.advance(0)
        rx.wait_for(1)
        service.advance(0)
        assert [r.path for r in rx.received] == ["/hook"]
        delivery = service.deliveries(hook)[0]
    assert delivery["lastResponseStatus"] == 302
    assert "redirects are not followed" in delivery["lastError"]


def test_a_retry_goes_to_the_integrations_url_of_the_moment(service: Service) -> None:
    with hooked(service) as (old, hook), running_receiver() as new:
        old.default = 500
        service.emit("EXECUTION_FAILED", {"reason": "x"})
        service.advance(0)
        old.wait_for(1)
        service.api.patch(f"/webhook-integrations/{hook}", json={"url": new.url})
        service.advance(1)
        new.wait_for(1)
        service.advance(0)
        assert service.deliveries(hook)[0]["status"] == "delivered"
        assert len(old.received) == 1


def test_deleting_the_integration_drops_its_pending_deliveries(service: Service) -> None:
    with hooked(service) as (rx, hook):
        rx.default = 500
        service.emit("EXECUTION_FAILED", {"reason": "x"})
        service.advance(0)
        rx.wait_for(1)
        assert service.api.delete(f"/webhook-integrations/{hook}").status_code == 204
        service.advance(10)
        assert len(rx.received) == 1


# -- the test event -------------------------------------------------------------------


def test_test_sends_execution_test_through_the_outbox(service: Service) -> None:
    with hooked(service, eventRules=["EXECUTION_FAILED"]) as (rx, hook):
        answer = service.api.post(f"/webhook-integrations/{hook}/test")
        assert answer.status_code == 200
        body = answer.json()
        assert body == {
            "deliveryId": body["deliveryId"],
            "status": "pending",
            "responseStatus": None,
            "integrationHealth": {
                "status": "healthy",
                "consecutiveFailures": 0,
                "failingSince": None,
            },
        }
        service.advance(0)
        [got] = rx.wait_for(1)
        service.advance(0)
        [delivery] = service.deliveries(hook)
    info = got.json()["info"]
    assert info["event"] == "EXECUTION_TEST" and info["execution_url"] == ""
    assert set(info["payload"]) == {"message"}
    assert verify(got.body, got.headers["X-Service-Signature"], service.public_key())
    assert delivery["id"] == body["deliveryId"]
    assert (delivery["status"], delivery["attempts"], delivery["lastResponseStatus"]) == (
        "delivered",
        1,
        204,
    )


def test_test_of_an_unknown_integration_is_404(service: Service) -> None:
    assert_error(service.api.post(f"/webhook-integrations/{uuid.uuid4()}/test"), 404)


def test_test_on_the_wall_clock_answers_the_first_attempt(tmp_path: Path) -> None:
    app = create_app(
        tmp_path / "wall.db", seed=TEST_SEED, settings=ServiceSettings(platform_url=PLATFORM)
    )
    with running(app) as (api, _), running_receiver(202) as rx:
        hook = api.post("/webhook-integrations", json={"name": "t", "url": rx.url}).json()["id"]
        answer = api.post(f"/webhook-integrations/{hook}/test").json()
        assert (answer["status"], answer["responseStatus"]) == ("delivered", 202)
        rx.default = 500
        failing = api.post(f"/webhook-integrations/{hook}/test").json()
        assert (failing["status"], failing["responseStatus"]) == ("pending", 500)
    app.state.db.close()


# -- durability ---------------------------------------------------------------------------


def _statuses(app: FastAPI, hook: str) -> list[tuple[str, str, int]]:
    api = Api(TestClient(app))
    items = api.get(f"/webhook-integrations/{hook}/deliveries").json()["items"]
    return [(d["executionId"], d["status"], d["attempts"]) for d in items]


def test_a_restart_sends_every_pending_delivery_and_nothing_delivered_again(
    tmp_path: Path,
) -> None:
    path, clock = tmp_path / "service.db", ManualClock()
    with running_receiver() as rx:
        app = create_app(path, seed=TEST_SEED, clock=clock, settings=SETTINGS)
        with running(app) as (api, advance):
            agent = api.ids("/agents")["checkout-agent"]
            hook = api.post("/webhook-integrations", json={"name": "h", "url": rx.url}).json()
            api.request("PUT", f"/agents/{agent}/webhooks/{hook['id']}", json={"eventRules": ["*"]})
            delivered = emit(app, agent, "EXECUTION_STARTED")
            advance(0)
            rx.wait_for(1)
            rx.answer(500)
            retrying = emit(app, agent, "EXECUTION_STARTED")
            advance(0)
            rx.wait_for(2)
            rx.answer(HANG)
            interrupted = emit(app, agent, "EXECUTION_STARTED")
            advance(0)
            rx.wait_for(3)  # in flight when the service stops
            never_tried = emit(app, agent, "EXECUTION_STARTED")
        before = dict((e, (s, a)) for e, s, a in _statuses(app, hook["id"]))
        app.state.db.close()
        assert before == {
            delivered: ("delivered", 1),
            retrying: ("pending", 1),
            interrupted: ("pending", 0),
            never_tried: ("pending", 0),
        }

        rx.release.set()  # the old connection's answer goes nowhere
        restarted = create_app(
            path, seed=TEST_SEED, clock=ManualClock(clock.now()), settings=SETTINGS
        )
        with running(restarted) as (_, advance):
            advance(0)
            rx.wait_for(5)
            advance(1)  # the retry keeps its time
            received = rx.wait_for(6)
            advance(0)
        after = dict((e, (s, a)) for e, s, a in _statuses(restarted, hook["id"]))
        restarted.state.db.close()
    sent = [r.json()["info"]["execution_id"] for r in received]
    assert sent.count(delivered) == 1  # recorded as delivered: never sent again
    assert sent.count(never_tried) == 1
    assert sent.count(retrying) == 2  # the failed attempt, then its retry
    assert sent.count(interrupted) == 2  # at least once: the cut attempt is made again
    assert after == {
        delivered: ("delivered", 1),
        retrying: ("delivered", 2),
        interrupted: ("delivered", 1),
        never_tried: ("delivered", 1),
    }
