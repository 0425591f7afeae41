"""Claims on jobs: how several processes on one database split the I/O work.

A delivery worker (service/delivery/worker.py) takes the jobs it will run by
claiming them in the write transaction that chooses them (SQLite's write lock
makes the choice and the claim one step, as `SELECT ... FOR UPDATE SKIP LOCKED`
does on PostgreSQL). A claim names its worker and holds until `lease_until`, on
real time: liveness is a property of processes, which a manual clock does not
govern. The worker renews its leases while it lives; a claim whose lease has
run out (its worker was killed) is free again, and the supervisor frees a dead
worker's claims at once. A job still claimed by a live worker is in flight:
nobody else starts it, and the fair scheduler counts it.

`shared_clock` holds a manual clock's instant for the workers to follow.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from agentform.service.store.database import Conn, iso, parse_iso


def _marks(values: Collection[object]) -> str:
    return ",".join("?" * len(values))


def live_ids(conn: Conn, kind: str, wall: datetime) -> set[int]:
    """Pending jobs of `kind` claimed by a worker whose lease still holds at `wall`."""
    rows = conn.execute(
        "SELECT id FROM jobs WHERE claimed_by IS NOT NULL AND status = 'pending' "
        "AND lease_until > ? AND kind = ?",
        (iso(wall), kind),
    )
    return {row[0] for row in rows}


def claim(conn: Conn, ids: Collection[int], worker: str, until: datetime) -> None:
    if ids:
        conn.execute(
            f"UPDATE jobs SET claimed_by = ?, lease_until = ? WHERE id IN ({_marks(ids)})",
            (worker, iso(until), *ids),
        )


def renew(conn: Conn, worker: str, until: datetime) -> int:
    """Extends the worker's claims on pending jobs to `until`; how many it holds."""
    cursor = conn.execute(
        "UPDATE jobs SET lease_until = ? WHERE claimed_by = ? AND status = 'pending'",
        (iso(until), worker),
    )
    return cursor.rowcount


def held(conn: Conn, job_id: int, worker: str, wall: datetime) -> bool:
    """Whether the pending job is still the worker's (its claim not lapsed nor taken)."""
    row = conn.execute(
        "SELECT 1 FROM jobs WHERE id = ? AND status = 'pending' AND claimed_by = ? "
        "AND lease_until > ?",
        (job_id, worker, iso(wall)),
    ).fetchone()
    return row is not None


def release(conn: Conn, worker: str, keep: Collection[int] = ()) -> int:
    """Frees the worker's claims on pending jobs (it stopped, or died), but for those
    in `keep` (the jobs it is running); how many."""
    cursor = conn.execute(
        "UPDATE jobs SET claimed_by = NULL, lease_until = NULL "
        f"WHERE claimed_by = ? AND status = 'pending' AND id NOT IN ({_marks(keep)})",
        (worker, *keep),
    )
    return cursor.rowcount


def write_instant(conn: Conn, instant: datetime) -> None:
    """A manual clock's instant, for the workers following it."""
    conn.execute(
        "INSERT INTO shared_clock (id, instant) VALUES (1, ?) "
        "ON CONFLICT (id) DO UPDATE SET instant = excluded.instant",
        (iso(instant),),
    )


def read_instant(conn: Conn) -> datetime | None:
    row = conn.execute("SELECT instant FROM shared_clock WHERE id = 1").fetchone()
    return parse_iso(row[0]) if row else None


def data_version(conn: Conn) -> int:
    """Changes whenever another connection (another process) has committed: how a
    worker notices new work without being told (PostgreSQL would LISTEN/NOTIFY)."""
    return int(conn.execute("PRAGMA data_version").fetchone()[0])
