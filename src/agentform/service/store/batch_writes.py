"""Writing an execution batch: creating it with all its items, `pending`, and
setting its columns (store/batches.py holds its tables and reads)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime

from agentform.rules.batches import BatchConfig
from agentform.rules.execute import ExecuteRequest
from agentform.service.errors import conflict
from agentform.service.store.batches import BATCHES, ITEMS
from agentform.service.store.database import Conn, iso, new_id


def insert_batch(
    conn: Conn,
    org_id: str,
    agent_id: str,
    name: str,
    start_at: datetime,
    config: BatchConfig,
    concurrency_group_id: str | None,
    items: Sequence[ExecuteRequest],
) -> str:
    """The batch and all its items, `pending`, in the caller's transaction; returns its id.

    A `startAt` already past starts the schedule now, not in the past: the slices
    keep their spacing rather than all falling due at once.
    """
    batch_id = new_id()
    origin = max(start_at, conn.now())
    group = concurrency_group_id or batch_id
    with _unique_batch_name(name):
        _insert_batch_row(
            conn, batch_id, org_id, agent_id, name, config, group, start_at, origin, len(items)
        )
    _insert_items(conn, batch_id, items)
    return batch_id


@contextmanager
def _unique_batch_name(name: str) -> Iterator[None]:
    """The uniqueness violation of a live batch's name as 409."""
    try:
        yield
    except sqlite3.IntegrityError as exc:
        if "UNIQUE" in str(exc):
            raise conflict(
                f"the agent already has a batch named '{name}' that is not cancelled"
            ) from None
        raise


def _insert_batch_row(
    conn: Conn,
    batch_id: str,
    org_id: str,
    agent_id: str,
    name: str,
    config: BatchConfig,
    concurrency_group_id: str,
    start_at: datetime,
    origin: datetime,
    count: int,
) -> None:
    """The batch's row, `pending`, with `count` items to come."""
    now = conn.now_iso()
    row = (batch_id, org_id, agent_id, name, config.batchSize, config.batchInterval)
    conn.execute(
        f"INSERT INTO {BATCHES} (id, organization_id, agent_id, name, status, batch_size, "
        "batch_interval, concurrency_group_id, start_at, schedule_origin, total_count, "
        "pending_count, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (*row, concurrency_group_id, iso(start_at), iso(origin), count, count, now, now),
    )


def _insert_items(conn: Conn, batch_id: str, items: Sequence[ExecuteRequest]) -> None:
    conn.executemany(
        f"INSERT INTO {ITEMS} (id, batch_id, idx, status, request, pool_id) "
        "VALUES (?, ?, ?, 'pending', ?, ?)",
        (
            (
                new_id(),
                batch_id,
                index,
                # `as_sent()` in one call of pydantic's serializer: a third of the cost.
                item.model_dump_json(exclude_unset=True),
                str(item.agentProfilePoolId) if item.agentProfilePoolId else None,
            )
            for index, item in enumerate(items)
        ),
    )


def set_batch(conn: Conn, batch_id: str, **columns: object) -> None:
    """Sets batch columns (names from this module only) and `updated_at`."""
    sets = ", ".join(f"{column} = ?" for column in columns)
    values = [iso(v) if isinstance(v, datetime) else v for v in columns.values()]
    conn.execute(
        f"UPDATE {BATCHES} SET {sets}, updated_at = ? WHERE id = ?",
        (*values, conn.now_iso(), batch_id),
    )
