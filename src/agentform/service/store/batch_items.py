"""The items of execution batches as they move: released, paused, cancelled,
waiting for capacity and settled (triggered or failed).

Every item move goes through `move_items` (or `settle_items`), which updates the
batch's counters by the rows it moved in the same statement's transaction, so the
counters are the items' statuses at every instant a reader can see (and a CHECK
keeps their sum equal to `total_count`). Moves are only along `ITEM_EDGES`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from agentform.rules.batch_statuses import COUNTER_OF_ITEM_STATUS, ITEM_EDGES, ItemStatus
from agentform.service.store.batches import BATCHES, ITEMS
from agentform.service.store.common import stored_json
from agentform.service.store.database import Conn, iso

COLUMN_OF_COUNTER = {
    "pendingCount": "pending_count",
    "awaitingCapacityCount": "awaiting_capacity_count",
    "triggeredCount": "triggered_count",
    "cancelledCount": "cancelled_count",
    "failedCount": "failed_count",
}


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
