"""Durable jobs: work that falls due on the clock, kept in SQLite (the outbox).

`schedule` is called inside the caller's write transaction, so a state change
and the work it causes commit together, or not at all. The runtime's runner
(`service.runtime`) runs each job when it falls due and marks it done in the
same transaction as the job's own effects: after a restart nothing recorded as
done runs again and nothing pending is lost.

A job may have a `key` (at most one pending job per key: scheduling again
replaces it, `cancel` drops it) and a `lane` (jobs of one lane run one at a
time, in due order, even when their handlers do I/O).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agentform.service.store.common import stored_json
from agentform.service.store.database import Conn, iso, parse_iso

JOBS_CHANGED = "jobs"
STATUSES = ("pending", "done", "failed", "cancelled")


@dataclass(frozen=True)
class Job:
    id: int
    kind: str
    due_at: datetime
    payload: dict[str, Any] = field(hash=False)
    key: str | None = None
    lane: str | None = None
    status: str = "pending"
    error: str | None = None


def job_from_row(row: sqlite3.Row) -> Job:
    return Job(
        id=row["id"],
        kind=row["kind"],
        due_at=parse_iso(row["due_at"]),
        payload=stored_json(row["payload"]),
        key=row["key"],
        lane=row["lane"],
        status=row["status"],
        error=row["error"],
    )


def schedule(
    conn: Conn,
    kind: str,
    due_at: datetime,
    payload: Mapping[str, Any] | None = None,
    *,
    key: str | None = None,
    lane: str | None = None,
) -> int:
    """Adds a job that falls due at `due_at`, in the caller's transaction; returns its id.

    A pending job with the same `key` is cancelled first: one pending job per key.
    The runner is woken once the transaction commits, told when the job falls due.
    """
    if key is not None:
        cancel(conn, key)
    cursor = conn.execute(
        "INSERT INTO jobs (kind, due_at, payload, key, lane, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        (kind, iso(due_at), json.dumps(dict(payload or {})), key, lane, conn.now_iso()),
    )
    conn.database.notify_after_commit(conn, JOBS_CHANGED, due_at)
    assert cursor.lastrowid is not None
    return cursor.lastrowid


def cancel(conn: Conn, key: str) -> bool:
    """Cancels the pending job of this key; False when there is none."""
    cursor = conn.execute(
        "UPDATE jobs SET status = 'cancelled', finished_at = ? "
        "WHERE key = ? AND status = 'pending'",
        (conn.now_iso(), key),
    )
    return cursor.rowcount > 0


def pending_job(conn: Conn, key: str) -> Job | None:
    row = conn.execute("SELECT * FROM jobs WHERE key = ? AND status = 'pending'", (key,)).fetchone()
    return job_from_row(row) if row else None


def get_job(conn: Conn, job_id: int) -> Job | None:
    row = conn.execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()
    return job_from_row(row) if row else None


def list_jobs(conn: Conn, *, kind: str | None = None, status: str | None = None) -> list[Job]:
    """Jobs in the order they were scheduled (for inspection and tests)."""
    where, args = ["1"], []
    if kind is not None:
        where.append("kind = ?")
        args.append(kind)
    if status is not None:
        where.append("status = ?")
        args.append(status)
    rows = conn.execute(f"SELECT * FROM jobs WHERE {' AND '.join(where)} ORDER BY id", args)
    return [job_from_row(r) for r in rows]


def _marks(values: Collection[object]) -> str:
    return ",".join("?" * len(values))


def _not_in(ids: Collection[int]) -> tuple[str, list[int]]:
    if not ids:
        return "", []
    return f" AND id NOT IN ({','.join('?' * len(ids))})", list(ids)


def due_jobs(
    conn: Conn,
    now: datetime,
    exclude: Collection[int],
    limit: int,
    *,
    kinds: Collection[str] | None = None,
    not_kinds: Collection[str] = (),
    busy_lanes: Collection[str] = (),
) -> list[Job]:
    """Pending jobs due at `now` or before, in due order (ties: the order scheduled),
    but for the ids in `exclude`: only of `kinds` when given, none of `not_kinds`,
    none of a lane in `busy_lanes`."""
    where, ids = _not_in(exclude)
    clauses, values = [where], list[object](ids)
    if kinds is not None:
        clauses.append(f" AND kind IN ({_marks(kinds)})")
        values += kinds
    if not_kinds:
        clauses.append(f" AND kind NOT IN ({_marks(not_kinds)})")
        values += not_kinds
    if busy_lanes:
        clauses.append(f" AND (lane IS NULL OR lane NOT IN ({_marks(busy_lanes)}))")
        values += busy_lanes
    rows = conn.execute(
        f"SELECT * FROM jobs WHERE status = 'pending' AND due_at <= ?{''.join(clauses)} "
        "ORDER BY due_at, id LIMIT ?",
        (iso(now), *values, limit),
    )
    return [job_from_row(r) for r in rows]


def next_due_after(
    conn: Conn, moment: datetime, *, not_kinds: Collection[str] = ()
) -> datetime | None:
    """When the first pending job due after `moment`, of none of `not_kinds`, falls due."""
    clause = f" AND kind NOT IN ({_marks(not_kinds)})" if not_kinds else ""
    row = conn.execute(  # in the pending jobs' due order: it stops at the first one
        f"SELECT due_at FROM jobs WHERE status = 'pending' AND due_at > ?{clause} "
        "ORDER BY due_at LIMIT 1",
        (iso(moment), *not_kinds),
    ).fetchone()
    return parse_iso(row[0]) if row else None


def newest_id(conn: Conn) -> int:
    """The id of the newest job (0: none yet): later ones are scheduled after it."""
    row = conn.execute("SELECT max(id) FROM jobs").fetchone()
    return int(row[0] or 0)


def scheduled_after(conn: Conn, job_id: int) -> tuple[int | None, datetime | None]:
    """(the newest id, the earliest due time) of the pending jobs after `job_id`."""
    row = conn.execute(
        "SELECT max(id), min(due_at) FROM jobs WHERE id > ? AND status = 'pending'", (job_id,)
    ).fetchone()
    return row[0], parse_iso(row[1]) if row[1] else None


def pending_kinds(conn: Conn) -> list[str]:
    """The kinds of the jobs still to run."""
    rows = conn.execute("SELECT DISTINCT kind FROM jobs WHERE status = 'pending' ORDER BY kind")
    return [row[0] for row in rows]


def is_pending(conn: Conn, job_id: int) -> bool:
    row = conn.execute("SELECT status FROM jobs WHERE id = ?", (job_id,)).fetchone()
    return row is not None and row[0] == "pending"


def pending_among(conn: Conn, ids: Collection[int]) -> set[int]:
    """Those of `ids` still pending."""
    rows = conn.execute(
        f"SELECT id FROM jobs WHERE status = 'pending' AND id IN ({_marks(ids)})", list(ids)
    )
    return {row[0] for row in rows}


def mark_done(conn: Conn, job_id: int) -> None:
    conn.execute(
        "UPDATE jobs SET status = 'done', finished_at = ? WHERE id = ? AND status = 'pending'",
        (conn.now_iso(), job_id),
    )


def mark_failed(conn: Conn, job_id: int, error: str) -> None:
    conn.execute(
        "UPDATE jobs SET status = 'failed', error = ?, finished_at = ? "
        "WHERE id = ? AND status = 'pending'",
        (error[:2000], conn.now_iso(), job_id),
    )


def prune(conn: Conn, before: datetime) -> int:
    """Forgets done and cancelled jobs finished before `before` (failed ones are kept)."""
    cursor = conn.execute(
        "DELETE FROM jobs WHERE status IN ('done', 'cancelled') AND finished_at < ?",
        (iso(before),),
    )
    return cursor.rowcount
