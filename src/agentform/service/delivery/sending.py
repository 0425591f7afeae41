"""Sending the outbox: the runner's I/O handler for delivery jobs, one lane per job.

A job sends its lane's deliveries in order, a few at a time (`fairness.BATCH`):

- `prepare` (a write transaction) reads the lane's oldest pending deliveries
  and signs their exact bytes there, in the runner's worker thread, off the
  event loop; the private key goes no further.
- `perform` (no transaction) POSTs them one after another, each with its own
  timeout on the runtime's clock, and stops at the first failed attempt (or
  when the lane's turn is up).
- `record` (a write transaction) records each attempt made: delivered; or
  failed and retried after 1 s, then 2 s (3 attempts in all, then the
  delivery is `failed`); a failed attempt counts toward the integration's
  failing mark (`backoff`). When every attempt was delivered and the lane's
  turn goes on (`fairness.Turn`), the lane's next deliveries are prepared in
  that same transaction and handed back to send at once; otherwise the lane's
  next job is scheduled and this one is done.

So the database work of a delivery is two short steps shared with its batch,
not two transactions and a scheduling pass of its own. Attempts stay one at a
time per lane, in order; after a crash between sending and recording, the
unrecorded deliveries of the batch are sent again, in order (at least once).
Execution notifications carry a new `event_id` on each attempt; batch
notifications keep the first one on every attempt (docs/service/choices.md).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx

from agentform.rules.signatures import sign
from agentform.rules.webhook_events import COMPLETED_EVENT
from agentform.service.delivery import backoff, fairness
from agentform.service.delivery.backoff import BACKOFF_SECONDS, MAX_ATTEMPTS
from agentform.service.delivery.connecting import checked_transport
from agentform.service.delivery.envelope import encode
from agentform.service.delivery.outbox import DELIVERY_JOB, delivered_topic, schedule_lane
from agentform.service.delivery.scrub import scrub
from agentform.service.delivery.sender import (
    LIMITS,
    Attempt,
    new_http_client,
    post,
    request_headers,
)
from agentform.service.models.deliveries import DeliveryStatus
from agentform.service.runtime import Done, IoJobHandler, RunContext
from agentform.service.store import deliveries, jobs
from agentform.service.store.database import Conn, new_id
from agentform.service.store.jobs import Job
from agentform.service.store.webhooks import ensure_signing_key, integration_target


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
class Outbound:
    """One delivery of a batch, ready to send."""

    delivery_id: str
    attempts: int  # made before this one
    body: bytes
    signature: str
    event_id: str


@dataclass(frozen=True)
class Prepared:
    """A batch of a lane's deliveries, in order, to one integration's target."""

    organization_id: str
    integration_id: str
    url: str
    headers: dict[str, str]
    batch: tuple[Outbound, ...]
    turn: fairness.Turn


@dataclass(frozen=True)
class Sent:
    """An attempt made, and when (on the runtime's clock)."""

    attempt: Attempt
    at: datetime


def _client(context: RunContext) -> httpx.AsyncClient:
    """The runner's client: the settings' transport, or the network with each
    connection's address checked (`connecting`); its own timeouts are the
    settings' too (the clock's deadline bounds the whole attempt)."""
    settings = context.settings
    transport = settings.webhook_transport or checked_transport(
        settings.webhook_resolver, settings.allow_private_webhooks, LIMITS
    )
    return new_http_client(settings.webhook_timeout_seconds, transport)


def prepare_batch(conn: Conn, lane: str, turn: fairness.Turn, platform_url: str) -> Prepared | None:
    """The lane's next deliveries (at most `fairness.BATCH`), signed, their links
    under `platform_url`; None when there are none, or their integration is gone."""
    heads = deliveries.lane_heads(conn, lane, fairness.BATCH)
    if not heads:
        return None
    first = heads[0]
    target = integration_target(conn, first.integration_id)
    if target is None:
        return None  # deleted with its integration
    url, headers = target
    pair = ensure_signing_key(conn, first.organization_id)
    batch = []
    for out in heads:
        stable = out.attempts == 0 or out.notification.get("type") == "execution_batch"
        event_id = out.event_id if stable else new_id()
        body = body_of(out.notification, event_id, platform_url, out.unwrap)
        signature = sign(body, pair.private_pem)
        batch.append(Outbound(out.id, out.attempts, body, signature, event_id))
    return Prepared(first.organization_id, first.integration_id, url, headers, tuple(batch), turn)


class DeliveryJob(IoJobHandler[Prepared, list[Sent]]):
    """The handler of `DELIVERY_JOB`: one lane's deliveries, a batch at a time."""

    def prepare(self, job: Job, conn: Conn, context: RunContext) -> Prepared | None:
        turn = fairness.Turn(conn.now())
        return prepare_batch(conn, job.payload["lane"], turn, context.settings.platform_url)

    async def perform(self, job: Job, prepared: Prepared, context: RunContext) -> list[Sent]:
        client = context.resource("webhook-http", lambda: _client(context))
        timeout = context.settings.webhook_timeout_seconds
        sent: list[Sent] = []
        for outbound in prepared.batch:
            at = context.clock.now()
            attempt = await post(
                client,
                prepared.url,
                outbound.body,
                request_headers(prepared.headers, outbound.signature),
                deadline=lambda: context.clock.deadline(timeout),
                timeout=timeout,
                seconds=context.clock.seconds,
            )
            sent.append(Sent(attempt, at))
            if not attempt.ok or not prepared.turn.goes_on(context.clock.now()):
                break
        return sent

    def choose_due(
        self, conn: Conn, kind: str, now: datetime, in_flight: Collection[int], free: int
    ) -> list[Job]:
        return fairness.choose(conn, kind, now, in_flight, free)

    def record(
        self, job: Job, conn: Conn, prepared: Prepared, outcome: list[Sent], context: RunContext
    ) -> Prepared | Done | None:
        """Records the attempts made; returns the lane's next deliveries to send at
        once while its turn goes on, else this job is done and the lane's next job,
        if it has more, follows it (under the lane's key, once this one is done)."""
        lane = job.payload["lane"]
        due = conn.now()
        for outbound, sent in zip(prepared.batch, outcome, strict=False):
            due = self._judge(conn, prepared, outbound, sent)
        turn, now = prepared.turn.after(len(outcome)), conn.now()
        if (
            all(sent.attempt.ok for sent in outcome)
            and turn.goes_on(now)
            and backoff.first_attempt_at(conn, prepared.integration_id, now) <= now
            and jobs.is_pending(conn, job.id)
        ):
            following = prepare_batch(conn, lane, turn, context.settings.platform_url)
            if following is not None:
                return following
        if not deliveries.lane_heads(conn, lane):
            return None
        org, integration = prepared.organization_id, prepared.integration_id
        return Done(lambda then: schedule_lane(then, lane, org, integration, due))

    def _judge(self, conn: Conn, prepared: Prepared, outbound: Outbound, sent: Sent) -> datetime:
        """Records one attempt; returns when the lane's next attempt is due."""
        outcome, number = sent.attempt, outbound.attempts + 1
        status: DeliveryStatus = "pending"
        due = conn.now()
        if outcome.ok:
            status = "delivered"
        elif number >= MAX_ATTEMPTS or outcome.final:
            status = "failed"
        else:
            due += timedelta(seconds=BACKOFF_SECONDS[number - 1])
        recorded = deliveries.record_attempt(
            conn,
            outbound.delivery_id,
            status,
            outcome.status,
            outcome.error,
            outbound.event_id,
            sent.at,
        )
        if not recorded:
            return due  # gone with its integration
        deliveries.insert_attempt(
            conn,
            outbound.delivery_id,
            number,
            outcome.status,
            outcome.error,
            scrub(outcome.head, prepared.headers.values()),  # a receiver may echo them
            outcome.seconds,
            sent.at,
        )
        held = backoff.after_attempt(
            conn, DELIVERY_JOB, prepared.integration_id, outcome.ok, status == "failed"
        )
        conn.database.notify_after_commit(conn, delivered_topic(outbound.delivery_id))
        return max(due, held)
