"""What the web console (service/console/) reads that no single API list answers:
counts by status over a window, integrations with their health and attachments, a
batch's items over time, an organization's executions in order. Always within one
organization.

Lists the API has (executions, deliveries, routing) are read through the store's
own functions, so the console shows what the API would answer.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from agentform.service.store.database import Conn, iso

LIVE_BATCHES = ("pending", "running", "paused")


@dataclass(frozen=True)
class Integration:
    id: str
    name: str
    url: str
    failing_since: str | None
    consecutive_failures: int
    attachments: list[dict[str, Any]]


def counts_since(
    conn: Conn, org_id: str, table: str, statuses: Sequence[str], since: datetime
) -> dict[str, int]:
    """How many of the organization's rows of `table` (executions or deliveries)
    were created since `since`, by status (those with none left out). One count per
    status, each a range of the (organization, status, created_at) index: no row read."""
    assert table in ("executions", "webhook_deliveries")
    counts = {}
    for status in statuses:
        found = conn.execute(
            f"SELECT count(*) FROM {table} "
            "WHERE organization_id = ? AND status = ? AND created_at >= ?",
            (org_id, status, iso(since)),
        ).fetchone()[0]
        if found:
            counts[status] = found
    return counts


def windows(now: datetime) -> list[tuple[str, datetime]]:
    return [("last hour", now - timedelta(hours=1)), ("last day", now - timedelta(days=1))]


def integrations(conn: Conn, org_id: str) -> list[Integration]:
    """The organization's integrations by name, each with its health and attachments."""
    rows = conn.execute(
        "SELECT i.id, i.name, i.url, h.failing_since, coalesce(h.consecutive_failures, 0) "
        "FROM webhook_integrations i LEFT JOIN webhook_health h ON h.integration_id = i.id "
        "WHERE i.organization_id = ? ORDER BY i.name",
        (org_id,),
    ).fetchall()
    attached: dict[str, list[dict[str, Any]]] = {}
    for a in conn.execute(
        "SELECT a.integration_id, a.agent_id, g.name, a.settings FROM webhook_attachments a "
        "JOIN agents g ON g.id = a.agent_id WHERE a.organization_id = ? ORDER BY g.name",
        (org_id,),
    ):
        attached.setdefault(a[0], []).append(
            {"agentId": a[1], "agentName": a[2], "settings": json.loads(a[3])}
        )
    return [Integration(r[0], r[1], r[2], r[3], r[4], attached.get(r[0], [])) for r in rows]


def live_batches(conn: Conn, org_id: str) -> list[dict[str, Any]]:
    marks = ",".join("?" * len(LIVE_BATCHES))
    rows = conn.execute(
        "SELECT b.id, b.name, b.status, b.total_count, b.triggered_count, b.failed_count, "
        "g.name FROM execution_batches b JOIN agents g ON g.id = b.agent_id "
        f"WHERE b.organization_id = ? AND b.status IN ({marks}) ORDER BY b.created_at DESC "
        "LIMIT 50",
        (org_id, *LIVE_BATCHES),
    )
    keys = ("id", "name", "status", "total", "triggered", "failed", "agentName")
    return [dict(zip(keys, r, strict=True)) for r in rows]


def agent_names(conn: Conn, org_id: str) -> list[tuple[str, str]]:
    """(id, name) of the organization's agents, for the executions filter."""
    rows = conn.execute(
        "SELECT id, name FROM agents WHERE organization_id = ? ORDER BY name LIMIT 500", (org_id,)
    )
    return [(r[0], r[1]) for r in rows]


def pool_names(conn: Conn, org_id: str) -> list[tuple[str, str]]:
    rows = conn.execute(
        "SELECT id, name FROM profile_sets WHERE organization_id = ? AND collection = 'pool' "
        "ORDER BY name LIMIT 500",
        (org_id,),
    )
    return [(r[0], r[1]) for r in rows]


def batch_timeline(conn: Conn, batch_id: str) -> list[tuple[str, str]]:
    """(time, outcome) of the batch's items that were triggered or failed, in time
    order: what the chart draws. A failed item without a time counts at the batch's
    last change."""
    rows = conn.execute(
        "SELECT coalesce(i.triggered_at, b.updated_at), i.status FROM execution_batch_items i "
        "JOIN execution_batches b ON b.id = i.batch_id "
        "WHERE i.batch_id = ? AND i.status IN ('triggered', 'failed') ORDER BY 1",
        (batch_id,),
    )
    return [(r[0], r[1]) for r in rows]


def execution_ids(conn: Conn, org_id: str) -> list[str]:
    """The organization's executions, in the order they were created (a test's page)."""
    rows = conn.execute(
        "SELECT id FROM executions WHERE organization_id = ? ORDER BY created_at, id", (org_id,)
    )
    return [r[0] for r in rows]
