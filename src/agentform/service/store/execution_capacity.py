"""What capacity (docs/service/contract.md#execute-request) reads: each organization's
maximum of concurrent executions (its seed entry, default 10), the executions holding
capacity, the queue, and the pools' members and when each profile was last used."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentform.service.models.execution_status import ACTIVE
from agentform.service.store.database import Conn

_ACTIVE = "status IN ({})".format(",".join(f"'{s}'" for s in sorted(ACTIVE)))


def room(conn: Conn, org_id: str) -> int:
    """How many more executions the organization may start now (one query): the count
    of those holding capacity is a row kept by triggers (migration 011) in the
    transaction of every change, so no count over executions."""
    found = conn.execute(
        "SELECT coalesce((SELECT max_concurrent FROM execution_capacity WHERE organization_id = ?),"
        " ?) - coalesce((SELECT active FROM execution_active_counts WHERE organization_id = ?), 0)",
        (org_id, DEFAULT_CAPACITY, org_id),
    ).fetchone()
    return max(0, int(found[0]))


def queued_ids(conn: Conn, org_id: str) -> list[str]:
    """The organization's queued executions, oldest first (insertion order, not the clock)."""
    rows = conn.execute(
        "SELECT id FROM executions WHERE organization_id = ? AND status = 'queued' ORDER BY rowid",
        (org_id,),
    )
    return [r[0] for r in rows]


def profiles_in_use(conn: Conn, profile_ids: Sequence[str]) -> set[str]:
    marks = ",".join("?" * len(profile_ids))
    rows = conn.execute(
        f"SELECT DISTINCT agent_profile_id FROM executions"
        f" WHERE agent_profile_id IN ({marks}) AND {_ACTIVE}",
        tuple(profile_ids),
    )
    return {r[0] for r in rows}


def last_used(conn: Conn, profile_ids: Sequence[str]) -> dict[str, str]:
    """When each profile last started an execution (absent: never)."""
    marks = ",".join("?" * len(profile_ids))
    rows = conn.execute(
        f"SELECT agent_profile_id, max(started_at) FROM executions"
        f" WHERE agent_profile_id IN ({marks}) AND started_at IS NOT NULL"
        f" GROUP BY agent_profile_id",
        tuple(profile_ids),
    )
    return {r[0]: r[1] for r in rows}


DEFAULT_CAPACITY = 10


def capacity(conn: Conn, org_id: str) -> int:
    """How many executions the organization may run at once (its seed entry, default 10)."""
    found = conn.execute(
        "SELECT max_concurrent FROM execution_capacity WHERE organization_id = ?", (org_id,)
    ).fetchone()
    return int(found[0]) if found else DEFAULT_CAPACITY


def set_capacity(conn: Conn, org_id: str, max_concurrent: int) -> None:
    conn.execute(
        "INSERT INTO execution_capacity VALUES (?, ?) ON CONFLICT (organization_id)"
        " DO UPDATE SET max_concurrent = excluded.max_concurrent",
        (org_id, max_concurrent),
    )


def is_full(conn: Conn, org_id: str) -> bool:
    return room(conn, org_id) == 0


def organizations_with_queued(conn: Conn) -> list[str]:
    rows = conn.execute("SELECT DISTINCT organization_id FROM executions WHERE status = 'queued'")
    return [r[0] for r in rows]


@dataclass(frozen=True)
class Pool:
    name: str
    selection_strategy: str
    allow_concurrent_use: bool


def pool(conn: Conn, pool_id: str) -> Pool | None:
    found = conn.execute(
        "SELECT name, selection_strategy, allow_concurrent_use FROM profile_sets"
        " WHERE id = ? AND collection = 'pool'",
        (pool_id,),
    ).fetchone()
    return Pool(found[0], found[1], bool(found[2])) if found else None


def pool_members(conn: Conn, pool_id: str) -> list[str]:
    """The pool's profiles, oldest first (the order ties are broken in)."""
    rows = conn.execute(
        "SELECT p.id FROM profile_set_members m JOIN profiles p ON p.id = m.profile_id"
        " WHERE m.set_id = ? ORDER BY p.created_at, p.id",
        (pool_id,),
    )
    return [r[0] for r in rows]
