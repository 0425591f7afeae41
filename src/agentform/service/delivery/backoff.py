"""What an attempt's outcome does to its integration: health, and the receiver's backoff.

- A successful attempt clears the integration's failure count and its failing
  mark.
- A failed attempt of a healthy integration backs off its own lane (1 s, then
  2 s); the integration's other lanes (other executions) go on.
- A delivery that ends `failed` counts toward `FAILING_THRESHOLD` consecutive
  failed deliveries; at the threshold the integration is failing: one attempt
  at a time (service/delivery/fairness.py), and each failed attempt pauses the
  whole integration (every lane, new deliveries too) for
  `FAILING_PAUSE_SECONDS`, however many lanes it has, until an attempt
  succeeds. `webhook test` is the exception: it is sent at once, so an
  operator can see whether the receiver is back.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from agentform.service.store import delivery_health, delivery_lanes
from agentform.service.store.database import Conn

MAX_ATTEMPTS = 3
BACKOFF_SECONDS = (1.0, 2.0)  # after the first and the second failed attempt
FAILING_THRESHOLD = 5  # consecutive failed deliveries
FAILING_PAUSE_SECONDS = 30.0


def after_attempt(
    conn: Conn, kind: str, integration_id: str, ok: bool, ended_failed: bool
) -> datetime:
    """Records the outcome's effect on the integration; returns when the integration
    may be attempted again (now, after a success)."""
    now = conn.now()
    if ok:
        delivery_health.record_success(conn, integration_id)
        return now
    if ended_failed:
        health = delivery_health.record_failed_delivery(conn, integration_id, FAILING_THRESHOLD)
    else:
        health = delivery_health.health(conn, integration_id)
    if not health.failing:
        return now  # each lane backs off on its own; the others go on
    until = now + timedelta(seconds=FAILING_PAUSE_SECONDS)
    delivery_health.pause(conn, integration_id, until)
    delivery_lanes.hold_integration(conn, kind, integration_id, until)
    return until


def first_attempt_at(conn: Conn, integration_id: str, now: datetime) -> datetime:
    """When a new delivery to the integration may be attempted: now, or the end of
    its pause."""
    paused = delivery_health.paused_until(conn, integration_id)
    return now if paused is None or paused <= now else paused
