"""An integration's health: its consecutive failed deliveries and whether it is failing.

Owns `webhook_health` (migration 007). A delivery that ends `failed` adds one
to the count; any successful attempt sets it back to zero and clears
`failing_since`. At `threshold` consecutive failed deliveries the integration
is failing from that moment.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from agentform.service.models.webhooks import IntegrationHealth
from agentform.service.store.database import Conn, iso, parse_iso


@dataclass(frozen=True)
class Health:
    consecutive_failures: int = 0
    failing_since: str | None = None

    @property
    def failing(self) -> bool:
        return self.failing_since is not None


def health(conn: Conn, integration_id: str) -> Health:
    row = conn.execute(
        "SELECT consecutive_failures, failing_since FROM webhook_health WHERE integration_id = ?",
        (integration_id,),
    ).fetchone()
    return Health() if row is None else Health(row[0], row[1])


def failing_among(conn: Conn, integration_ids: Collection[str]) -> set[str]:
    """Those of `integration_ids` that are failing now."""
    if not integration_ids:
        return set()
    marks = ",".join("?" * len(integration_ids))
    rows = conn.execute(
        f"SELECT integration_id FROM webhook_health WHERE integration_id IN ({marks}) "
        "AND failing_since IS NOT NULL",
        tuple(integration_ids),
    )
    return {r[0] for r in rows}


def record_success(conn: Conn, integration_id: str) -> None:
    conn.execute(
        "UPDATE webhook_health SET consecutive_failures = 0, failing_since = NULL "
        "WHERE integration_id = ? AND (consecutive_failures > 0 OR failing_since IS NOT NULL)",
        (integration_id,),
    )


def record_failed_delivery(conn: Conn, integration_id: str, threshold: int) -> Health:
    """One more delivery ended `failed`; the integration's health after it."""
    now = conn.now_iso()
    conn.execute(
        "INSERT INTO webhook_health (integration_id, consecutive_failures) VALUES (?, 1) "
        "ON CONFLICT (integration_id) "
        "DO UPDATE SET consecutive_failures = consecutive_failures + 1",
        (integration_id,),
    )
    conn.execute(
        "UPDATE webhook_health SET failing_since = ? WHERE integration_id = ? "
        "AND failing_since IS NULL AND consecutive_failures >= ?",
        (now, integration_id, threshold),
    )
    return health(conn, integration_id)


def pause(conn: Conn, integration_id: str, until: datetime) -> None:
    """No new attempt of the integration before `until` (its receiver backs off)."""
    conn.execute(
        "INSERT INTO webhook_health (integration_id, paused_until) VALUES (?, ?) "
        "ON CONFLICT (integration_id) DO UPDATE SET paused_until = excluded.paused_until",
        (integration_id, iso(until)),
    )


def paused_until(conn: Conn, integration_id: str) -> datetime | None:
    row = conn.execute(
        "SELECT paused_until FROM webhook_health WHERE integration_id = ?", (integration_id,)
    ).fetchone()
    return None if row is None or row[0] is None else parse_iso(row[0])


def wire_health(conn: Conn, integration_id: str) -> IntegrationHealth:
    found = health(conn, integration_id)
    return IntegrationHealth(
        status="failing" if found.failing else "healthy",
        consecutiveFailures=found.consecutive_failures,
        failingSince=found.failing_since,
    )
