"""The delivery jobs as the fair scheduler sees them (service/delivery/fairness.py).

A delivery job's payload names its lane, organization and integration; these
queries read them back to choose which lanes to send next, count what is in
flight per organization and integration, and hold an integration's lanes back
while its receiver backs off. All of it reads or writes the runtime's `jobs`
table, restricted to one job kind.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from agentform.service.store.database import Conn, iso
from agentform.service.store.jobs import Job, job_from_row


@dataclass(frozen=True)
class LaneJob:
    """A due delivery job and whose it is."""

    job: Job
    organization_id: str
    integration_id: str


def _marks(values: Collection[object]) -> str:
    return ",".join("?" * len(values))


def due_lane_jobs(
    conn: Conn,
    kind: str,
    now: datetime,
    exclude: Collection[int],
    per_integration: int,
    per_organization: int,
) -> list[LaneJob]:
    """Pending jobs of `kind` due at `now`, but for `exclude`: the `per_integration`
    oldest of each integration, and of those the `per_organization` oldest of each
    organization, oldest first. So what a pass reads is bounded by the number of
    organizations, not by the backlog. (A job written before payloads named their
    organization counts as its own lane's.)"""
    not_in = f" AND id NOT IN ({_marks(exclude)})" if exclude else ""
    rows = conn.execute(
        "SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY org ORDER BY due_at, id) "
        "AS org_nth FROM (SELECT *, "
        "row_number() OVER (PARTITION BY integration ORDER BY due_at, id) AS nth FROM "
        "(SELECT *, coalesce(json_extract(payload, '$.org'), '') AS org, "
        "coalesce(json_extract(payload, '$.integration'), json_extract(payload, '$.lane')) "
        "AS integration "
        f"FROM jobs WHERE status = 'pending' AND kind = ? AND due_at <= ?{not_in})) "
        "WHERE nth <= ?) WHERE org_nth <= ? ORDER BY due_at, id",
        (kind, iso(now), *exclude, per_integration, per_organization),
    )
    return [LaneJob(job_from_row(r), r["org"], r["integration"]) for r in rows]


def owners_of(conn: Conn, kind: str, ids: Collection[int]) -> list[tuple[str, str]]:
    """(organization, integration) of each job of `kind` among `ids` (those in flight)."""
    if not ids:
        return []
    rows = conn.execute(
        "SELECT coalesce(json_extract(payload, '$.org'), ''), "
        "coalesce(json_extract(payload, '$.integration'), json_extract(payload, '$.lane')) "
        f"FROM jobs WHERE kind = ? AND id IN ({_marks(ids)})",
        (kind, *ids),
    )
    return [(r[0], r[1]) for r in rows]


def hold_integration(conn: Conn, kind: str, integration_id: str, until: datetime) -> None:
    """No pending job of the integration falls due before `until` (its receiver backs off)."""
    conn.execute(
        "UPDATE jobs SET due_at = ? WHERE status = 'pending' AND kind = ? "
        "AND json_extract(payload, '$.integration') = ? AND due_at < ?",
        (iso(until), kind, integration_id, iso(until)),
    )
