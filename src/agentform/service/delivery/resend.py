"""Resending: a new delivery of a delivery's event, through the outbox like any other.

The copy has its own id, attempts and signature (the bytes are signed when
sent), and goes in the same lane as the original (the integration and the
execution or batch), behind what is pending there. An execution notification
gets a new `event_id`; a batch notification keeps the original's, as its
attempts do. A delivery whose integration was deleted went with it: not found.
"""

from __future__ import annotations

import sqlite3

from agentform.service.delivery.outbox import enqueue
from agentform.service.store import delivery_history
from agentform.service.store.common import stored_json
from agentform.service.store.database import Conn
from agentform.service.store.delivery_history import DeliveryFilter


def resend(conn: Conn, org_id: str, delivery_id: str) -> str:
    """A new delivery of the organization's delivery `delivery_id`; its id."""
    return _copy(conn, delivery_history.owned_delivery(conn, org_id, delivery_id))


def resend_failed(conn: Conn, which: DeliveryFilter) -> list[str]:
    """A new delivery of each failed delivery matching `which` (at most
    MAX_RESENT, oldest first); their ids."""
    return [_copy(conn, row) for row in delivery_history.failed_since(conn, which)]


def _copy(conn: Conn, row: sqlite3.Row) -> str:
    notification = stored_json(row["notification"])
    batch = notification.get("type") == "execution_batch"
    return enqueue(
        conn,
        row["organization_id"],
        row["integration_id"],
        row["event"],
        notification,
        bool(row["unwrap"]),
        execution_id=row["execution_id"],
        batch_id=row["batch_id"],
        event_ref=row["event_ref"],
        event_id=row["event_id"] if batch else None,
    )
