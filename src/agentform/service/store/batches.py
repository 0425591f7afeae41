"""Execution batches (docs/service/contract.md#execution-batches): their tables,
a batch's row as the scheduler reads it (`BatchRow`), row -> model, and the reads.
Creating and setting a batch is store/batch_writes.py; its items' moves, each
with the batch's counters, are store/batch_items.py.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from agentform.rules.batch_statuses import BatchStatus
from agentform.rules.batches import CONFIG_TYPE, BatchConfig
from agentform.service.models.batches import BatchItem, ExecutionBatch
from agentform.service.models.pages import Page
from agentform.service.store.common import fetch_owned, model_from_row, stored_json
from agentform.service.store.database import Conn, parse_iso
from agentform.service.store.pages import PageParams, PageRequest, Sorting, read_page

BATCHES = "execution_batches"
ITEMS = "execution_batch_items"
LIVE_STATUSES: tuple[BatchStatus, ...] = ("pending", "running", "paused")


@dataclass(frozen=True)
class BatchRow:
    """What the scheduler needs of a batch."""

    id: str
    organization_id: str
    agent_id: str
    name: str
    status: BatchStatus
    config: BatchConfig
    concurrency_group_id: str
    start_at: datetime
    schedule_origin: datetime
    paused_at: datetime | None
    released_count: int
    started: bool
    total_count: int
    triggered_count: int
    cancelled_count: int
    unsettled_count: int  # pending, awaiting capacity or held by a pause


def _config(row: sqlite3.Row) -> BatchConfig:
    return BatchConfig(
        type=CONFIG_TYPE, batchSize=row["batch_size"], batchInterval=row["batch_interval"]
    )


def batch_from_row(row: sqlite3.Row) -> ExecutionBatch:
    return model_from_row(ExecutionBatch, row, config=_config(row))


def state_from_row(row: sqlite3.Row) -> BatchRow:
    return BatchRow(
        id=row["id"],
        organization_id=row["organization_id"],
        agent_id=row["agent_id"],
        name=row["name"],
        status=row["status"],
        config=_config(row),
        concurrency_group_id=row["concurrency_group_id"],
        start_at=parse_iso(row["start_at"]),
        schedule_origin=parse_iso(row["schedule_origin"]),
        paused_at=parse_iso(row["paused_at"]) if row["paused_at"] else None,
        released_count=row["released_count"],
        started=row["started_at"] is not None,
        total_count=row["total_count"],
        triggered_count=row["triggered_count"],
        cancelled_count=row["cancelled_count"],
        unsettled_count=row["pending_count"] + row["awaiting_capacity_count"],
    )


def item_from_row(row: sqlite3.Row) -> BatchItem:
    return model_from_row(BatchItem, row, index=row["idx"], request=stored_json(row["request"]))


# -- reads --------------------------------------------------------------------


def _owned(conn: Conn, org_id: str, batch_id: object) -> sqlite3.Row:
    return fetch_owned(conn, BATCHES, batch_id, org_id, "execution batch")


def get_batch(conn: Conn, org_id: str, batch_id: object) -> ExecutionBatch:
    return batch_from_row(_owned(conn, org_id, batch_id))


def batch_state(conn: Conn, batch_id: str) -> BatchRow | None:
    row = conn.execute(f"SELECT * FROM {BATCHES} WHERE id = ?", (batch_id,)).fetchone()
    return state_from_row(row) if row else None


def owned_state(conn: Conn, org_id: str, batch_id: object) -> BatchRow:
    """The organization's batch, else 404."""
    return state_from_row(_owned(conn, org_id, batch_id))


def answer(conn: Conn, batch_id: str) -> ExecutionBatch:
    row = conn.execute(f"SELECT * FROM {BATCHES} WHERE id = ?", (batch_id,)).fetchone()
    return batch_from_row(row)


def list_batches(
    conn: Conn,
    org_id: str,
    request: PageRequest,
    agent_id: str | None = None,
    statuses: Collection[str] = (),
) -> Page[ExecutionBatch]:
    where, args = "organization_id = ?", [org_id]
    if agent_id is not None:
        where += " AND agent_id = ?"
        args.append(agent_id)
    if statuses:
        where += f" AND status IN ({','.join('?' * len(statuses))})"
        args.extend(sorted(statuses))
    return read_page(conn, BATCHES, where, args, request, batch_from_row)


def list_items(conn: Conn, org_id: str, batch_id: object, paging: PageParams) -> Page[BatchItem]:
    row = _owned(conn, org_id, batch_id)
    return read_page(
        conn, ITEMS, "batch_id = ?", [row["id"]], PageRequest(paging, Sorting("idx")), item_from_row
    )


def is_concurrency_group(conn: Conn, org_id: str, group_id: str) -> bool:
    """Some batch of the organization is in this concurrency group (a batch that
    named none is in the group of its own id)."""
    row = conn.execute(
        "SELECT 1 FROM execution_batches WHERE organization_id = ? AND concurrency_group_id = ?"
        " LIMIT 1",
        (org_id, group_id),
    ).fetchone()
    return row is not None


def live_batch_naming(conn: Conn, pool_id: str) -> str | None:
    """The name of a pending, running or paused batch with an item naming this pool (or group)."""
    marks = ",".join("?" * len(LIVE_STATUSES))
    row = conn.execute(
        f"SELECT b.name FROM {ITEMS} i JOIN {BATCHES} b ON b.id = i.batch_id "
        f"WHERE i.pool_id = ? AND b.status IN ({marks}) LIMIT 1",
        (pool_id, *LIVE_STATUSES),
    ).fetchone()
    return row[0] if row else None
