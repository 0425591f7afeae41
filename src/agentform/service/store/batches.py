"""Execution batches and their items (docs/service/contract.md#execution-batches):
tables, queries, row -> model.

Every item move goes through `move_items`, which updates the batch's counters
by the rows it moved in the same statement's transaction, so the counters are
the items' statuses at every instant a reader can see (and a CHECK keeps
their sum equal to `total_count`). Moves are only along `ITEM_EDGES`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

from agentform.rules.batches import (
    CONFIG_TYPE,
    COUNTER_OF_ITEM_STATUS,
    ITEM_EDGES,
    BatchConfig,
    BatchStatus,
    ItemStatus,
)
from agentform.rules.execute import ExecuteRequest
from agentform.service.errors import conflict
from agentform.service.models.batches import BatchItem, ExecutionBatch
from agentform.service.models.pages import Page
from agentform.service.store.common import fetch_owned, model_from_row, stored_json
from agentform.service.store.database import Conn, iso, new_id, parse_iso
from agentform.service.store.pages import PageParams, PageRequest, Sorting, read_page

BATCHES = "execution_batches"
ITEMS = "execution_batch_items"
LIVE_STATUSES: tuple[BatchStatus, ...] = ("pending", "running", "paused")
COLUMN_OF_COUNTER = {
    "pendingCount": "pending_count",
    "awaitingCapacityCount": "awaiting_capacity_count",
    "triggeredCount": "triggered_count",
    "cancelledCount": "cancelled_count",
    "failedCount": "failed_count",
}


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


# -- writes -------------------------------------------------------------------


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


def _count_moved(conn: Conn, batch_id: str, frm: ItemStatus, to: ItemStatus, moved: int) -> None:
    source = COLUMN_OF_COUNTER[COUNTER_OF_ITEM_STATUS[frm]]
    target = COLUMN_OF_COUNTER[COUNTER_OF_ITEM_STATUS[to]]
    if moved and source != target:
        conn.execute(
            f"UPDATE {BATCHES} SET {source} = {source} - ?, {target} = {target} + ?, "
            "updated_at = ? WHERE id = ?",
            (moved, moved, conn.now_iso(), batch_id),
        )


def move_items(
    conn: Conn,
    batch_id: str,
    frm: ItemStatus,
    to: ItemStatus,
    *,
    indexes: range | None = None,
    due_at: datetime | None = None,
) -> int:
    """Moves the batch's items in `frm` (those of `indexes`, when given) to `to`."""
    if (frm, to) not in ITEM_EDGES:
        raise ValueError(f"an item does not move from {frm} to {to}")
    where = "batch_id = ? AND status = ?"
    args: list[object] = [batch_id, frm]
    if indexes is not None:
        where += " AND idx >= ? AND idx < ?"
        args += [indexes.start, indexes.stop]
    sets = "status = ?"
    set_args: list[object] = [to]
    if due_at is not None:
        sets += ", due_at = ?"
        set_args.append(iso(due_at))
    moved = conn.execute(f"UPDATE {ITEMS} SET {sets} WHERE {where}", (*set_args, *args)).rowcount
    _count_moved(conn, batch_id, frm, to, moved)
    return moved


@dataclass(frozen=True)
class WaitingItem:
    rowid: int
    batch_id: str
    agent_id: str
    index: int
    request: dict[str, object]
    pool_id: str | None


# Walk the waiting index in its order and stop at LIMIT; left to itself the planner
# would gather every waiting item of the organization and sort them.
_WAITING = (
    f"FROM {ITEMS} i INDEXED BY execution_batch_items_waiting "
    f"JOIN {BATCHES} b ON b.id = i.batch_id "
    "WHERE i.status = 'awaiting_capacity' AND b.organization_id = ?"
)


def oldest_waiting(
    conn: Conn, org_id: str, limit: int, skip_pools: Collection[str] = ()
) -> list[WaitingItem]:
    """The organization's items awaiting capacity, oldest due first, then in the order
    they were created (older batch first, then index): the order of the index that
    serves this (`due_at`, then rowid), so no sort of every waiting item. Items
    naming a pool of `skip_pools` (busy ones) are passed over."""
    skip = ""
    if skip_pools:
        skip = f" AND (i.pool_id IS NULL OR i.pool_id NOT IN ({','.join('?' * len(skip_pools))}))"
    rows = conn.execute(
        f"SELECT i.rowid, i.batch_id, b.agent_id, i.idx, i.request, i.pool_id {_WAITING}{skip} "
        "ORDER BY i.due_at, i.rowid LIMIT ?",
        (org_id, *skip_pools, limit),
    ).fetchall()
    return [WaitingItem(r[0], r[1], r[2], r[3], stored_json(r[4]), r[5]) for r in rows]


@dataclass(frozen=True)
class Settled:
    """A waiting item's end: triggered (with its execution) or failed (with the reason)."""

    item: WaitingItem
    execution_id: str | None = None
    failure_reason: str | None = None

    @property
    def to(self) -> ItemStatus:
        return "triggered" if self.execution_id is not None else "failed"


def settle_items(conn: Conn, settled: Sequence[Settled]) -> None:
    """Settles waiting items: one `executemany` and one counter update per batch and
    outcome (each from the rows that statement moved)."""
    groups: dict[tuple[str, ItemStatus], list[Settled]] = {}
    for one in settled:
        groups.setdefault((one.item.batch_id, one.to), []).append(one)
    for (batch_id, to), group in groups.items():
        at = conn.now_iso() if to == "triggered" else None
        moved = conn.executemany(
            f"UPDATE {ITEMS} SET status = ?, execution_id = ?, triggered_at = ?, "
            "failure_reason = ? WHERE rowid = ? AND status = 'awaiting_capacity'",
            ((to, s.execution_id, at, s.failure_reason, s.item.rowid) for s in group),
        ).rowcount
        _count_moved(conn, batch_id, "awaiting_capacity", to, moved)


def has_waiting(conn: Conn, org_id: str) -> bool:
    """Whether the organization has items awaiting capacity (its batches' counters,
    read from an index of the batches that have any: migration 012)."""
    found = conn.execute(
        f"SELECT 1 FROM {BATCHES} WHERE organization_id = ? AND awaiting_capacity_count > 0"
        " LIMIT 1",
        (org_id,),
    ).fetchone()
    return found is not None


def organizations_with_waiting_items(conn: Conn) -> list[str]:
    """Organizations that have items awaiting capacity (for a sweep after a restart)."""
    rows = conn.execute(
        f"SELECT DISTINCT b.organization_id FROM {ITEMS} i JOIN {BATCHES} b "
        "ON b.id = i.batch_id WHERE i.status = 'awaiting_capacity'"
    ).fetchall()
    return [r[0] for r in rows]
