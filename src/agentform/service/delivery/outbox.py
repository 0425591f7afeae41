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
- They are sent by the runner's delivery handler (`sending.DeliveryJob`):
  one attempt at a time per lane, retried after 1 s, then 2 s (3 attempts in
  all, then the delivery is `failed`); a failed attempt counts toward the
  integration's failing mark (`backoff`).
- Which due lanes get the runner's free slots is chosen fairly across
  organizations and integrations (`fairness`), not oldest first.
- Each attempt is kept (`webhook_attempts`: time, status, duration, the
  answer's first bytes). Execution notifications carry a new `event_id` on
  each attempt; batch notifications keep the first one on every attempt.

A notification is stored as its envelope with relative links
(`/executions/<id>`); the service's `platform_url` setting is put in front of
them at each attempt, with that attempt's own `event_id` (`sending.body_of`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agentform.rules.webhook_events import BATCH_EVENTS, TEST_EVENT
from agentform.service.delivery import backoff
from agentform.service.delivery.envelope import (
    batch_envelope,
    execution_envelope,
    test_envelope,
)
from agentform.service.store import agents, deliveries, jobs, routing
from agentform.service.store.database import Conn
from agentform.service.store.events import Event, event_subscriber
from agentform.service.store.webhooks import (
    attachments_of_agent,
    owned_integration_id,
)

DELIVERY_JOB = "webhook.delivery"


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
