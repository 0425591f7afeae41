"""Routing decisions: for every event the outbox weighs, whether each attachment of
the event's agent got a delivery, and the setting that decided it. Owns
`routing_decisions` (migration 007).

The outbox records a decision where it evaluates the attachment's rules
(`AttachmentSettings.decide`), in the transaction that records the event, so a
decision exists exactly when the event does. A decision belongs to its integration
(and organization): deleting either deletes the decisions, as it deletes the
deliveries they explain. `explain_execution` reads them back, per execution,
with what became of each delivery (delivered after N attempts, failed, pending).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from agentform.rules.webhook_attachments import Routing
from agentform.service.store.database import Conn, Database
from agentform.service.store.events import Event, event_from_row
from agentform.service.store.executions import owned_row

MAX_DECISIONS = 2000
"""At most this many decisions are read for one execution (its events times attachments)."""


@dataclass(frozen=True)
class RoutingDecision:
    """Why one event of an execution went (or did not go) to one integration."""

    event_id: str
    event: str
    at: str
    integration_id: str
    integration_name: str
    wanted: bool
    rule: str
    reason: str
    delivery_id: str | None
    delivery_status: str | None
    attempts: int

    @property
    def outcome(self) -> str:
        """What became of it, in words: not sent, delivered after N attempts, ..."""
        if not self.wanted:
            return "not sent"
        if self.delivery_status is None:
            return "sent to a delivery that no longer exists"
        tries = f"{self.attempts} attempt{'s' if self.attempts != 1 else ''}"
        if self.delivery_status == "delivered":
            return f"delivered after {tries}"
        if self.delivery_status == "failed":
            return f"failed after {tries}"
        return "waiting for its first attempt" if not self.attempts else f"retrying after {tries}"

    def as_json(self) -> dict[str, object]:
        return {
            "eventId": self.event_id,
            "event": self.event,
            "at": self.at,
            "integrationId": self.integration_id,
            "integrationName": self.integration_name,
            "sent": self.wanted,
            "rule": self.rule,
            "reason": self.reason,
            "deliveryId": self.delivery_id,
            "deliveryStatus": self.delivery_status,
            "attempts": self.attempts,
            "outcome": self.outcome,
        }


def record_decision(
    conn: Conn, event: Event, integration_id: str, routing: Routing, delivery_id: str | None
) -> None:
    """Keeps the decision the outbox made for one attachment, in the event's transaction."""
    conn.execute(
        "INSERT INTO routing_decisions (organization_id, integration_id, event_ref, event, "
        "execution_id, batch_id, wanted, rule, reason, delivery_id, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            event.organization_id,
            integration_id,
            event.id,
            event.event,
            event.execution_id,
            event.batch_id,
            int(routing.wanted),
            routing.rule,
            routing.reason,
            delivery_id,
            conn.now_iso(),
        ),
    )


def _decision(row: sqlite3.Row) -> RoutingDecision:
    return RoutingDecision(
        event_id=row["event_ref"],
        event=row["event"],
        at=row["created_at"],
        integration_id=row["integration_id"],
        integration_name=row["name"],
        wanted=bool(row["wanted"]),
        rule=row["rule"],
        reason=row["reason"],
        delivery_id=row["delivery_id"],
        delivery_status=row["status"],
        attempts=row["attempts"] or 0,
    )


def decisions_of_execution(conn: Conn, org_id: str, execution_id: str) -> list[RoutingDecision]:
    """The execution's decisions, in its events' order, then by integration name (the
    attachments of one moment have no order of their own), at most MAX_DECISIONS."""
    rows = conn.execute(
        "SELECT r.*, i.name, d.status, d.attempts FROM routing_decisions r "
        "JOIN events e ON e.id = r.event_ref "
        "JOIN webhook_integrations i ON i.id = r.integration_id "
        "LEFT JOIN webhook_deliveries d ON d.id = r.delivery_id "
        "WHERE r.organization_id = ? AND r.execution_id = ? "
        "ORDER BY e.seq, i.name, r.seq LIMIT ?",
        (org_id, execution_id, MAX_DECISIONS),
    )
    return [_decision(r) for r in rows]


def events_of_execution(conn: Conn, org_id: str, execution_id: str, limit: int) -> list[Event]:
    """The execution's first `limit` events, in order (the decisions explain them)."""
    rows = conn.execute(
        "SELECT * FROM events WHERE organization_id = ? AND execution_id = ? ORDER BY seq LIMIT ?",
        (org_id, execution_id, limit),
    )
    return [event_from_row(r) for r in rows]


def explain_execution(db: Database, org_id: str, execution_id: object) -> list[RoutingDecision]:
    """The routing decisions of the organization's execution; another organization's
    execution, or none, is a 404 (ServiceError), so existence never leaks."""
    with db.read() as conn:
        row = owned_row(conn, org_id, execution_id)
        return decisions_of_execution(conn, org_id, row.id)
