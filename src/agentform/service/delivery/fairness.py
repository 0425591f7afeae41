"""Which delivery lanes to send next: fair across organizations and integrations.

The runner has `IO_SLOTS` concurrent I/O jobs (service/runtime/runner.py); every
delivery attempt holds one until its receiver answers or the attempt times out.
Handing free slots out oldest-first let one organization whose receivers never
answer hold them all.
Instead, each time slots are free:

- an organization holds at most `ORGANIZATION_SHARE` slots, an integration at
  most `INTEGRATION_SHARE`, and a failing integration one (a single probe);
- free slots go round-robin: each to the organization with the fewest attempts
  in flight (ties: the one whose oldest due delivery is oldest), and within it
  to the integration with the fewest in flight, whose oldest due lane is sent.

So however many receivers another tenant has, and whatever they do, a healthy
receiver's deliveries find a free slot at once: the others' attempts can hold
at most their shares. Each lane (an integration and an execution, or batch)
still sends one delivery at a time, in order.

A lane keeps its slot for a turn: it sends its deliveries in batches of up to
`BATCH` (service/delivery/sending.py), and while they are delivered, the next
batch at once, up to `TURN_DELIVERIES` deliveries or `TURN_SECONDS` on the
clock, before the lane goes back to the scheduler.
A turn never lets an integration or organization hold more slots than its
share (the slot is the same one), and it ends at the first failed attempt,
so a backing-off lane gives its slot up; what it saves is a scheduling pass
and a job per delivery, which were most of the outbox's cost.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta

from agentform.service.store import delivery_health, delivery_lanes
from agentform.service.store.database import Conn
from agentform.service.store.delivery_lanes import LaneJob
from agentform.service.store.jobs import Job

ORGANIZATION_SHARE = 32
INTEGRATION_SHARE = 16
FAILING_SHARE = 1
TURN_DELIVERIES = 32
BATCH = 16  # deliveries of a lane prepared, sent one after another, and recorded together
TURN_SECONDS = 1.0


@dataclass(frozen=True)
class Turn:
    """A lane's turn on its slot: when it began, and how many deliveries it has sent."""

    started_at: datetime
    sent: int = 0

    def after(self, sent: int) -> Turn:
        """The turn once `sent` more deliveries are sent."""
        return Turn(self.started_at, self.sent + sent)

    def goes_on(self, now: datetime) -> bool:
        """Whether the lane may send another delivery before giving its slot back."""
        within = now - self.started_at < timedelta(seconds=TURN_SECONDS)
        return self.sent < TURN_DELIVERIES and within


def choose(
    conn: Conn, kind: str, now: datetime, in_flight: Collection[int], free: int
) -> list[Job]:
    """Up to `free` due jobs of `kind` to start now, fairly (see the module's doc),
    with `in_flight` counted in the shares: the caller's own, and, for a delivery
    worker, those other processes hold claims on (delivery/claiming.py)."""
    if free <= 0:
        return []
    due = delivery_lanes.due_lane_jobs(
        conn, kind, now, in_flight, INTEGRATION_SHARE, ORGANIZATION_SHARE
    )
    if not due:
        return []
    busy = delivery_lanes.owners_of(conn, kind, in_flight)
    by_org: Counter[str] = Counter(org for org, _ in busy)
    by_integration: Counter[str] = Counter(integration for _, integration in busy)
    failing = delivery_health.failing_among(conn, {lane.integration_id for lane in due})
    waiting: dict[str, dict[str, list[LaneJob]]] = {}
    for lane in due:  # oldest first, so each list is too
        waiting.setdefault(lane.organization_id, {}).setdefault(lane.integration_id, []).append(
            lane
        )
    chosen: list[Job] = []
    while len(chosen) < free:
        org = _next_organization(waiting, by_org)
        if org is None:
            break
        integrations = waiting[org]
        integration = min(
            integrations, key=lambda i: (by_integration[i], integrations[i][0].job.due_at)
        )
        lane = integrations[integration].pop(0)
        share = FAILING_SHARE if integration in failing else INTEGRATION_SHARE
        by_integration[integration] += 1
        if not integrations[integration] or by_integration[integration] >= share:
            del integrations[integration]  # nothing more of it this time
        if by_integration[integration] > share:
            continue  # already at its share: the lane waits
        by_org[org] += 1
        chosen.append(lane.job)
    return chosen


def _next_organization(
    waiting: dict[str, dict[str, list[LaneJob]]], by_org: Counter[str]
) -> str | None:
    """The organization with lanes waiting, under its share, fewest in flight."""
    for org in [o for o, integrations in waiting.items() if not integrations]:
        del waiting[org]
    open_orgs = [o for o in waiting if by_org[o] < ORGANIZATION_SHARE]
    if not open_orgs:
        return None
    return min(
        open_orgs,
        key=lambda o: (by_org[o], min(lanes[0].job.due_at for lanes in waiting[o].values())),
    )
