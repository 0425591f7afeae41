"""Webhook deliveries: the outbox (docs/service/contract.md#webhook-integrations).

A row per notification to send to one integration, written in the same
transaction as the change that caused it; the runtime's delivery handler
sends it and records each attempt here. Owns `webhook_deliveries` (migration 004).
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agentform.service.models.deliveries import Delivery, DeliveryStatus
from agentform.service.models.pages import Page
from agentform.service.store.common import model_from_row, stored_json
from agentform.service.store.database import Conn, iso
from agentform.service.store.pages import PageParams
from agentform.service.store.webhooks import integration_page


@dataclass(frozen=True)
class Outgoing:
    """What the sender needs of a delivery."""

    id: str
    organization_id: str
    integration_id: str
    event: str
    notification: dict[str, Any]
    unwrap: bool
    status: DeliveryStatus
    attempts: int
    event_id: str
    lane: str


_sequence_lock = threading.Lock()
_last_sequence = 0


def sequential_id(now: datetime) -> str:
    """A UUID (version 7 layout, its time `now`: the service's clock) whose text
    sorts in the order ids were made.

    Lists order by `createdAt`, then id; deliveries written at one instant (one
    event, several attachments; or a manual clock) so list in the order written.
    """
    global _last_sequence
    with _sequence_lock:
        _last_sequence = max(_last_sequence + 1, (int(now.timestamp() * 1000)) << 12)
        sequence = _last_sequence
    millis, counter = sequence >> 12, sequence & 0xFFF
    value = (millis << 80) | (0x7 << 76) | (counter << 64) | (0b10 << 62) | secrets.randbits(62)
    return str(uuid.UUID(int=value))


def delivery_from_row(row: sqlite3.Row) -> Delivery:
    return model_from_row(Delivery, row)


def list_deliveries(
    conn: Conn, org_id: str, integration_id: object, paging: PageParams
) -> Page[Delivery]:
    return integration_page(
        conn, org_id, integration_id, "webhook_deliveries", paging, delivery_from_row
    )


def insert_delivery(
    conn: Conn,
    org_id: str,
    integration_id: str,
    event: str,
    notification: Mapping[str, Any],
    unwrap: bool,
    execution_id: str | None = None,
    batch_id: str | None = None,
    delivery_id: str | None = None,
    event_ref: str | None = None,
    lane: str | None = None,
    event_id: str | None = None,
) -> str:
    """A pending delivery of `notification` (an envelope whose `event_id` each
    attempt sets; the first attempt's is chosen now, so `eventId` always shows
    the one sent last or next). Deliveries of one `lane` are sent one at a time,
    oldest first (default: a lane of its own)."""
    delivery_id, now = delivery_id or sequential_id(conn.now()), conn.now_iso()
    conn.execute(
        "INSERT INTO webhook_deliveries VALUES "
        "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, NULL, NULL, ?, ?)",
        (
            delivery_id,
            org_id,
            integration_id,
            event,
            json.dumps(notification),
            int(unwrap),
            event_ref,
            lane or delivery_id,
            execution_id,
            batch_id,
            event_id or str(uuid.uuid4()),
            now,
            now,
        ),
    )
    return delivery_id


def deliveries_of_event(conn: Conn, event_ref: str) -> list[str]:
    """The integration ids an event was (or is being) delivered to, one per delivery."""
    rows = conn.execute(
        "SELECT integration_id FROM webhook_deliveries WHERE event_ref = ?", (event_ref,)
    )
    return [r[0] for r in rows]


def get_delivery(conn: Conn, delivery_id: str) -> Delivery | None:
    row = conn.execute("SELECT * FROM webhook_deliveries WHERE id = ?", (delivery_id,)).fetchone()
    return None if row is None else delivery_from_row(row)


def lane_heads(conn: Conn, lane: str, limit: int = 1) -> list[Outgoing]:
    """The oldest pending deliveries of a lane (up to `limit`): the next to send, in order."""
    rows = conn.execute(
        "SELECT * FROM webhook_deliveries WHERE lane = ? AND status = 'pending' "
        "ORDER BY created_at, id LIMIT ?",
        (lane, limit),
    )
    return [_outgoing(row) for row in rows]


def _outgoing(row: sqlite3.Row) -> Outgoing:
    return Outgoing(
        id=row["id"],
        organization_id=row["organization_id"],
        integration_id=row["integration_id"],
        event=row["event"],
        notification=stored_json(row["notification"]),
        unwrap=bool(row["unwrap"]),
        status=row["status"],
        attempts=row["attempts"],
        event_id=row["event_id"],
        lane=row["lane"],
    )


def record_attempt(
    conn: Conn,
    delivery_id: str,
    status: DeliveryStatus,
    response_status: int | None,
    error: str | None,
    event_id: str,
    at: datetime,
) -> bool:
    """One attempt of a pending delivery done (at `at`): its outcome and the event_id
    it carried (what eventId shows). False when the delivery is gone or not pending."""
    cursor = conn.execute(
        "UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, "
        "last_response_status = ?, last_error = ?, event_id = ?, updated_at = ? "
        "WHERE id = ? AND status = 'pending'",
        (status, response_status, error, event_id, iso(at), delivery_id),
    )
    return cursor.rowcount > 0


def insert_attempt(
    conn: Conn,
    delivery_id: str,
    number: int,
    response_status: int | None,
    error: str | None,
    head: str,
    seconds: float,
    at: datetime,
) -> None:
    """What attempt `number` of a delivery, made at `at`, saw (`webhook_attempts`,
    migration 007)."""
    conn.execute(
        "INSERT OR REPLACE INTO webhook_attempts VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            delivery_id,
            number,
            iso(at),
            response_status,
            round(seconds * 1000),
            error,
            head[:256],
        ),
    )
