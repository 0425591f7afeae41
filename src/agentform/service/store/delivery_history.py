"""Deliveries as operators look at them: filtered lists with their attempts, and
what a resend copies (agentform's own routes, service/routes/agentform_deliveries.py).

Reads `webhook_deliveries` and `webhook_attempts` (migrations 004 and 007),
always within one organization: another organization's delivery is not found.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from agentform.service.errors import not_found
from agentform.service.store.common import row_as, stored_json
from agentform.service.store.database import Conn

MAX_LISTED = 100
MAX_RESENT = 1000


@dataclass(frozen=True)
class DeliveryFilter:
    organization_id: str
    integration_id: str | None = None
    status: str | None = None
    since: str | None = None  # ISO time: created at or after
    execution_id: str | None = None


def _where(which: DeliveryFilter) -> tuple[str, list[Any]]:
    clauses, args = ["organization_id = ?"], [which.organization_id]
    for column, value in (
        ("integration_id", which.integration_id),
        ("status", which.status),
        ("execution_id", which.execution_id),
    ):
        if value is not None:
            clauses.append(f"{column} = ?")
            args.append(value)
    if which.since is not None:
        clauses.append("created_at >= ?")
        args.append(which.since)
    return " AND ".join(clauses), args


def list_with_attempts(
    conn: Conn, which: DeliveryFilter, limit: int = MAX_LISTED
) -> list[dict[str, Any]]:
    """The newest `limit` deliveries matching `which`, newest first, each with its attempts."""
    where, args = _where(which)
    rows = conn.execute(
        f"SELECT * FROM webhook_deliveries WHERE {where} ORDER BY created_at DESC, id DESC LIMIT ?",
        (*args, min(limit, MAX_LISTED)),
    ).fetchall()
    attempts = _attempts_of(conn, [r["id"] for r in rows])
    return [_shown(row, attempts.get(row["id"], [])) for row in rows]


def _attempts_of(conn: Conn, ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    if not ids:
        return {}
    rows = conn.execute(
        f"SELECT * FROM webhook_attempts WHERE delivery_id IN ({','.join('?' * len(ids))}) "
        "ORDER BY delivery_id, number",
        ids,
    )
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault(r["delivery_id"], []).append(
            {
                "number": r["number"],
                "at": r["attempted_at"],
                "responseStatus": r["response_status"],
                "durationMs": r["duration_ms"],
                "error": r["error"],
                "responseHead": r["response_head"],
            }
        )
    return out


def _shown(row: sqlite3.Row, attempts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": row["id"],
        "integrationId": row["integration_id"],
        "event": row["event"],
        "eventId": row["event_id"],
        "executionId": row["execution_id"],
        "batchId": row["batch_id"],
        "status": row["status"],
        "createdAt": row["created_at"],
        "updatedAt": row["updated_at"],
        "attempts": attempts,
    }


@dataclass(frozen=True)
class StoredDelivery:
    """What a resend copies of a delivery: whose, the event and its notification."""

    organization_id: str
    integration_id: str
    event: str
    notification: dict[str, Any]
    unwrap: bool
    execution_id: str | None
    batch_id: str | None
    event_ref: str | None
    event_id: str


def _stored(row: sqlite3.Row) -> StoredDelivery:
    notification = stored_json(row["notification"])
    return row_as(StoredDelivery, row, notification=notification, unwrap=bool(row["unwrap"]))


def owned_delivery(conn: Conn, org_id: str, delivery_id: str) -> StoredDelivery:
    """The organization's delivery, else 404 (another organization's too)."""
    return _stored(_owned_row(conn, org_id, delivery_id))


def _owned_row(conn: Conn, org_id: str, delivery_id: str) -> sqlite3.Row:
    row: sqlite3.Row | None = conn.execute(
        "SELECT * FROM webhook_deliveries WHERE id = ? AND organization_id = ?",
        (delivery_id, org_id),
    ).fetchone()
    if row is None:
        raise not_found("webhook delivery")
    return row


def one_with_attempts(
    conn: Conn, org_id: str, delivery_id: str
) -> tuple[StoredDelivery, dict[str, Any]]:
    """The organization's delivery (else 404): what it holds, and as lists show it."""
    row = _owned_row(conn, org_id, delivery_id)
    return _stored(row), _shown(row, _attempts_of(conn, [row["id"]]).get(row["id"], []))


def failed_since(conn: Conn, which: DeliveryFilter) -> list[StoredDelivery]:
    """The failed deliveries matching `which`, oldest first (at most MAX_RESENT)."""
    where, args = _where(
        DeliveryFilter(which.organization_id, which.integration_id, "failed", which.since)
    )
    rows = conn.execute(
        f"SELECT * FROM webhook_deliveries WHERE {where} ORDER BY created_at, id LIMIT ?",
        (*args, MAX_RESENT),
    ).fetchall()
    return [_stored(row) for row in rows]
