"""The webhook outbox: deliveries written with the events that cause them, sent by the runner.

- `enqueue_deliveries` subscribes to `append_event`: in the transaction that
  records an event (and the state change behind it), it writes one delivery
  per attachment of the event's agent that wants the event, and schedules a
  delivery job for each; it records, for every attachment, the decision and the
  rule that made it (`store.routing`). Nothing is sent from a request.
- Deliveries of one integration and one execution (or batch) form a lane,
  sent one at a time, oldest first, so a receiver gets an execution's events
  in the order they happened, retries included. A lane has at most one
  pending job (keyed by the lane), so however long the backlog, the runner's
  due jobs are one per lane and lanes are sent in parallel.
- `DeliveryJob` is the runner's I/O handler for those jobs: it reads the
  lane's oldest pending delivery (transaction), signs and POSTs the exact bytes
  (no transaction; the timeout runs on the runtime's clock), and records the
  attempt (transaction), scheduling the lane's next job: after 1 s, then 2 s
  when the attempt failed (3 attempts in all, then the delivery is `failed`),
  at once when another delivery waits. A failed attempt pauses the whole
  integration and counts toward its failing mark (`backoff`).
- Which due lanes get the runner's free slots is chosen fairly across
  organizations and integrations (`fairness`), not oldest first.
- Each attempt is kept (`webhook_attempts`: time, status, duration, the
  answer's first bytes). Execution notifications carry a new `event_id` on
  each attempt; batch notifications keep the first one on every attempt.

A notification is stored as its envelope with relative links
(`/executions/<id>`); the service's `platform_url` setting is put in front of
them at each attempt, with that attempt's own `event_id`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from agentform.rules.signatures import sign
from agentform.rules.webhooks import BATCH_EVENTS, COMPLETED_EVENT, TEST_EVENT
from agentform.service.delivery import backoff, fairness
from agentform.service.delivery.backoff import BACKOFF_SECONDS, MAX_ATTEMPTS
from agentform.service.delivery.envelope import (
    batch_envelope,
    encode,
    execution_envelope,
    test_envelope,
)
from agentform.service.delivery.sender import (
    TIMEOUT_SECONDS,
    Attempt,
    new_http_client,
    post,
    request_headers,
)
from agentform.service.models.deliveries import DeliveryStatus
from agentform.service.runtime import IoJobHandler, RunContext, current_context, io_job_handler
from agentform.service.store import agents, deliveries, jobs, routing
from agentform.service.store.database import Conn, new_id
from agentform.service.store.events import Event, event_subscriber
from agentform.service.store.jobs import Job
from agentform.service.store.webhooks import (
    attachments_of_agent,
    ensure_signing_key,
    integration_target,
    owned_integration_id,
)

DELIVERY_JOB = "webhook.delivery"
__all__ = ["BACKOFF_SECONDS", "MAX_ATTEMPTS"]
DEFAULT_PLATFORM_URL = "http://127.0.0.1:8700/agents/v2"

# Settings (create_app(settings=...)): where links point, and the attempt timeout.
PLATFORM_URL = "platform_url"
TIMEOUT = "webhook_timeout_seconds"
WEBHOOK_TRANSPORT = "webhook_transport"  # an httpx transport in place of the network


def delivered_topic(delivery_id: str) -> str:
    """Notified after the commit that records an attempt of this delivery."""
    return f"webhook-delivery:{delivery_id}"


# -- writing deliveries ----------------------------------------------------------


def notification_of(conn: Conn, event: Event) -> dict[str, Any]:
    """The envelope of an event, links relative, `event_id` set at each attempt."""
    common: dict[str, Any] = {
        "event_id": "",
        "timestamp": event.created_at,
        "agent_id": event.agent_id,
        "agent_name": agents.agent_name(conn, event.agent_id),
        "payload": event.payload,
        "platform_url": "",
    }
    if event.event in BATCH_EVENTS:
        return batch_envelope(
            event.event,
            batch_id=event.batch_id or str(event.payload.get("batch_id", "")),
            batch_name=str(event.payload.get("batch_name", "")),
            **common,
        )
    return execution_envelope(
        event.event, execution_id=event.execution_id or "", metadata=event.metadata, **common
    )


def enqueue(
    conn: Conn,
    organization_id: str,
    integration_id: str,
    event: str,
    notification: dict[str, Any],
    unwrap: bool,
    *,
    execution_id: str | None = None,
    batch_id: str | None = None,
    delivery_id: str | None = None,
    event_ref: str | None = None,
    event_id: str | None = None,
) -> str:
    """Writes a delivery and schedules its first attempt now, in the caller's transaction
    (`event_id`: the one its first attempt carries; default: a new one)."""
    delivery_id = delivery_id or deliveries.sequential_id(conn.now())
    lane = f"webhook:{integration_id}:{execution_id or batch_id or delivery_id}"
    deliveries.insert_delivery(
        conn,
        organization_id,
        integration_id,
        event,
        notification,
        unwrap,
        execution_id,
        batch_id,
        delivery_id=delivery_id,
        event_ref=event_ref,
        lane=lane,
        event_id=event_id,
    )
    if jobs.pending_job(conn, lane) is None:  # else the lane's job will come to it
        due = conn.now()
        if event != TEST_EVENT:  # a test is sent at once, to see whether the receiver is back
            due = backoff.first_attempt_at(conn, integration_id, due)
        schedule_lane(conn, lane, organization_id, integration_id, due)
    return delivery_id


def schedule_lane(
    conn: Conn, lane: str, organization_id: str, integration_id: str, due: datetime
) -> None:
    """The lane's job, naming whose it is (the fair scheduler reads them)."""
    payload = {"lane": lane, "org": organization_id, "integration": integration_id}
    jobs.schedule(conn, DELIVERY_JOB, due, payload, key=lane)


@event_subscriber
def enqueue_deliveries(conn: Conn, event: Event) -> None:
    """One delivery per attachment of the event's agent that wants the event."""
    notification: dict[str, Any] | None = None
    for integration_id, settings in attachments_of_agent(conn, event.agent_id):
        decision = settings.decide(event.event, event.payload, event.metadata)
        if not decision.wanted:
            routing.record_decision(conn, event, integration_id, decision, None)
            continue
        notification = notification or notification_of(conn, event)
        delivery_id = enqueue(
            conn,
            event.organization_id,
            integration_id,
            event.event,
            notification,
            settings.unwraps(event.event),
            execution_id=event.execution_id,
            batch_id=event.batch_id,
            event_ref=event.id,
        )
        routing.record_decision(conn, event, integration_id, decision, delivery_id)


def enqueue_test(
    conn: Conn, organization_id: str, integration_id: object, delivery_id: str
) -> None:
    """EXECUTION_TEST for `POST /webhook-integrations/{id}/test`: a delivery like any
    other (same outbox, signature and retries), whatever the integration's attachments."""
    owned = owned_integration_id(conn, organization_id, integration_id)
    notification = test_envelope(event_id="", timestamp=conn.now_iso(), subject_id=delivery_id)
    enqueue(conn, organization_id, owned, TEST_EVENT, notification, False, delivery_id=delivery_id)


# -- sending them ------------------------------------------------------------------


def body_of(notification: dict[str, Any], event_id: str, platform_url: str, unwrap: bool) -> bytes:
    """The exact bytes of one attempt."""
    info = dict(notification["info"])
    for link in ("execution_url", "batch_url"):
        if str(info.get(link, "")).startswith("/"):
            info[link] = platform_url + info[link]
    if unwrap and info.get("event") == COMPLETED_EVENT:
        return encode(info["payload"].get("result", {}))
    return encode({**notification, "event_id": event_id, "info": info})


@dataclass(frozen=True)
class Prepared:
    delivery_id: str
    url: str
    headers: dict[str, str]
    body: bytes
    private_pem: str
    event_id: str


@io_job_handler(DELIVERY_JOB)
class DeliveryJob(IoJobHandler[Prepared, Attempt]):
    def prepare(self, job: Job, conn: Conn) -> Prepared | None:
        out = deliveries.lane_head(conn, job.payload["lane"])
        if out is None:
            return None  # nothing left: deleted with its integration, say
        target = integration_target(conn, out.integration_id)
        if target is None:
            return None
        url, headers = target
        pair = ensure_signing_key(conn, out.organization_id)
        # A batch notification's event_id is stable across attempts; an execution
        # notification's is new on each (docs/service/choices.md).
        stable = out.attempts == 0 or out.notification.get("type") == "execution_batch"
        event_id = out.event_id if stable else new_id()
        settings = current_context().settings
        platform_url = str(settings.get(PLATFORM_URL) or DEFAULT_PLATFORM_URL)
        body = body_of(out.notification, event_id, platform_url, out.unwrap)
        return Prepared(out.id, url, headers, body, pair.private_pem, event_id)

    async def perform(self, job: Job, prepared: Prepared, context: RunContext) -> Attempt:
        # Signing is CPU work: off the event loop, like the database.
        signature = await asyncio.to_thread(sign, prepared.body, prepared.private_pem)
        transport = context.settings.get(WEBHOOK_TRANSPORT)
        client = context.resource("webhook-http", lambda: new_http_client(transport=transport))
        timeout = float(context.settings.get(TIMEOUT, TIMEOUT_SECONDS))
        return await post(
            client,
            prepared.url,
            prepared.body,
            request_headers(prepared.headers, signature),
            deadline=lambda: context.clock.sleep(timeout),
            timeout=timeout,
            seconds=context.clock.seconds,
        )

    def choose_due(
        self, conn: Conn, kind: str, now: datetime, in_flight: Collection[int], free: int
    ) -> list[Job]:
        return fairness.choose(conn, kind, now, in_flight, free)

    def record(self, job: Job, conn: Conn, prepared: Prepared, outcome: Attempt) -> None:
        lane = job.payload["lane"]
        jobs.mark_done(conn, job.id)  # first, so the lane's next job can take its key
        due = conn.now()
        current = deliveries.outgoing(conn, prepared.delivery_id)
        if current is None:
            return  # its integration was deleted, and the lane with it
        if current.status == "pending":
            due = self._judge(conn, current, prepared, outcome)
        if deliveries.lane_head(conn, lane) is not None:
            schedule_lane(conn, lane, current.organization_id, current.integration_id, due)

    def _judge(
        self, conn: Conn, current: deliveries.Outgoing, prepared: Prepared, outcome: Attempt
    ) -> datetime:
        """Records the attempt; returns when the lane's next attempt is due."""
        attempt = current.attempts + 1
        status: DeliveryStatus = "pending"
        due = conn.now()
        if outcome.ok:
            status = "delivered"
        elif attempt >= MAX_ATTEMPTS:
            status = "failed"
        else:
            due += timedelta(seconds=BACKOFF_SECONDS[attempt - 1])
        deliveries.record_attempt(
            conn, current.id, status, outcome.status, outcome.error, prepared.event_id
        )
        deliveries.insert_attempt(
            conn, current.id, attempt, outcome.status, outcome.error, outcome.head, outcome.seconds
        )
        held = backoff.after_attempt(
            conn, DELIVERY_JOB, current.integration_id, outcome.ok, status == "failed"
        )
        conn.database.notify_after_commit(conn, delivered_topic(current.id))
        return max(due, held)
