"""Resending: a new delivery of a delivery's event, through the outbox like any other.

The copy has its own id, attempts and signature (the bytes are signed when
sent), and goes in the same lane as the original (the integration and the
execution or batch), behind what is pending there. An execution notification
gets a new `event_id`; a batch notification keeps the original's, as its
attempts do. A delivery whose integration was deleted went with it: not found.
"""

from __future__ import annotations

from agentform.service.delivery.outbox import enqueue
from agentform.service.store import delivery_history
from agentform.service.store.database import Conn
from agentform.service.store.delivery_history import DeliveryFilter, StoredDelivery


def resend(conn: Conn, org_id: str, delivery_id: str) -> str:
    """A new delivery of the organization's delivery `delivery_id`; its id."""
    return _copy(conn, delivery_history.owned_delivery(conn, org_id, delivery_id))


def resend_failed(conn: Conn, which: DeliveryFilter) -> list[str]:
    """A new delivery of each failed delivery matching `which` (at most
    MAX_RESENT, oldest first); their ids."""
    return [_copy(conn, found) for found in delivery_history.failed_since(conn, which)]


def _copy(conn: Conn, original: StoredDelivery) -> str:
    batch = original.notification.get("type") == "execution_batch"
    return enqueue(
        conn,
        original.organization_id,
        original.integration_id,
        original.event,
        original.notification,
        original.unwrap,
        execution_id=original.execution_id,
        batch_id=original.batch_id,
        event_ref=original.event_ref,
        event_id=original.event_id if batch else None,
    )
