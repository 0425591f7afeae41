"""What the service forgets: history older than the retention (docs/guide/security.md#retention).

Deliveries (with their attempts), routing decisions, events and executions (with
their files) grow with every execution and every resend; a service that runs for
months would grow without bound. `prune_batch` deletes, in the caller's (short)
transaction, at most `limit` rows of each kind older than `before`, oldest first:

- a delivery that is no longer pending, last changed before `before` (its attempts
  go with it);
- a routing decision made before `before` whose delivery, if any, is gone or no
  longer pending;
- an event recorded before `before` that no pending delivery notifies of, and that
  is not of an unfinished execution;
- an execution that ended (completed, failed or cancelled) before `before`, that
  no pending delivery is of (its files go with it).

A pending delivery and an unfinished execution are never deleted, however old. A
batch item whose execution is deleted keeps its `executionId` (the execution then
answers 404, like any deleted object).
"""

from __future__ import annotations

from datetime import datetime

from agentform.service.store.database import Conn, iso

BATCH = 200
"""Rows of each kind one transaction deletes at most: a few milliseconds of work,
so the runner's other jobs (deliveries) wait no longer than that."""

_PENDING = "SELECT 1 FROM webhook_deliveries p WHERE p.status = 'pending' AND p.{} = {}"

_DELETIONS = {
    "deliveries": (
        "webhook_deliveries",
        "rowid",
        "status <> 'pending' AND updated_at < :before",
        "updated_at",
    ),
    "routingDecisions": (
        "routing_decisions",
        "seq",
        "created_at < :before AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d "
        "WHERE d.id = routing_decisions.delivery_id AND d.status = 'pending')",
        "created_at",
    ),
    "events": (
        "events",
        "seq",
        "created_at < :before"
        f" AND NOT EXISTS ({_PENDING.format('event_ref', 'events.id')})"
        " AND NOT EXISTS (SELECT 1 FROM executions e"
        " WHERE e.id = events.execution_id AND e.terminal_at IS NULL)",
        "created_at",
    ),
    "executions": (
        "executions",
        "rowid",
        "terminal_at IS NOT NULL AND terminal_at < :before"
        f" AND NOT EXISTS ({_PENDING.format('execution_id', 'executions.id')})",
        "terminal_at",
    ),
}
"""kind -> (table, its row key, which rows are old enough, the order to take them in)."""


def prune_batch(conn: Conn, before: datetime, organization_id: str | None = None) -> dict[str, int]:
    """Deletes at most `BATCH` old rows of each kind (of one organization, when given);
    returns how many of each."""
    counts: dict[str, int] = {}
    args = {"before": iso(before), "org": organization_id, "limit": BATCH}
    scope = "" if organization_id is None else " AND organization_id = :org"
    for kind, (table, key, old, order) in _DELETIONS.items():
        cursor = conn.execute(
            f"DELETE FROM {table} WHERE {key} IN (SELECT {key} FROM {table} "
            f"WHERE {old}{scope} ORDER BY {order} LIMIT :limit)",
            args,
        )
        counts[kind] = cursor.rowcount
    return counts
