"""The batch status machine and the item statuses, as data
(docs/service/contract.md#batch-statuses), written once: the service moves batches
and items by them, and the provisioner reads a batch's status by the same names.

`BATCH_EDGES` holds every edge of a batch under the action that takes it, with
`next_status` the one function that moves a batch; `ITEM_EDGES` the moves an item
may make, and `COUNTER_OF_ITEM_STATUS` the batch counter each item status is
counted in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, get_args

from agentform.core.errors import AgentformError

BatchStatus = Literal["pending", "running", "paused", "completed", "cancelled"]
BATCH_STATUSES: tuple[BatchStatus, ...] = get_args(BatchStatus)
FINAL_STATUSES: frozenset[BatchStatus] = frozenset({"completed", "cancelled"})

BatchAction = Literal["start", "pause", "resume", "cancel", "complete"]
BATCH_ACTIONS: tuple[BatchAction, ...] = get_args(BatchAction)

# Every edge of the batch statuses (docs/service/contract.md#batch-statuses), under the
# action that takes it.
# `resume` has two targets: `running`, or `pending` while `startAt` is still ahead.
BATCH_EDGES: Mapping[BatchAction, frozenset[tuple[BatchStatus, BatchStatus]]] = {
    "start": frozenset({("pending", "running")}),
    "pause": frozenset({("pending", "paused"), ("running", "paused")}),
    "resume": frozenset({("paused", "running"), ("paused", "pending")}),
    "cancel": frozenset(
        {("pending", "cancelled"), ("running", "cancelled"), ("paused", "cancelled")}
    ),
    "complete": frozenset({("running", "completed")}),
}
ALL_BATCH_EDGES: frozenset[tuple[BatchStatus, BatchStatus]] = frozenset().union(
    *BATCH_EDGES.values()
)


class TransitionRefused(AgentformError):
    """The action is not allowed in the batch's current status (the service's 409)."""

    def __init__(self, status: str, action: str) -> None:
        super().__init__(f"cannot {action} a batch that is {status}")
        self.status = status
        self.action = action


def next_status(status: BatchStatus, action: BatchAction, *, start_due: bool = True) -> BatchStatus:
    """Where `action` takes a batch in `status`; `start_due` says whether `startAt` has come.

    Raises `TransitionRefused` when the batch statuses
    (docs/service/contract.md#batch-statuses) have no such edge.
    """
    targets = {to for frm, to in BATCH_EDGES[action] if frm == status}
    if not targets:
        raise TransitionRefused(status, action)
    if len(targets) == 1:
        return next(iter(targets))
    return "running" if start_due else "pending"


# -- items --------------------------------------------------------------------

ItemStatus = Literal[
    "pending", "awaiting_capacity", "batch_paused", "triggered", "cancelled", "failed"
]
ITEM_STATUSES: tuple[ItemStatus, ...] = get_args(ItemStatus)
# Items that still have to be triggered, fail or be cancelled: a batch with any
# of these is not complete.
UNSETTLED_ITEM_STATUSES: frozenset[ItemStatus] = frozenset(
    {"pending", "awaiting_capacity", "batch_paused"}
)

# The batch counter each item status is counted in; a paused item is pending
# (docs/service/contract.md#batch-object: "pendingCount: not yet due, or held by a pause").
COUNTER_OF_ITEM_STATUS: Mapping[ItemStatus, str] = {
    "pending": "pendingCount",
    "batch_paused": "pendingCount",
    "awaiting_capacity": "awaitingCapacityCount",
    "triggered": "triggeredCount",
    "cancelled": "cancelledCount",
    "failed": "failedCount",
}
COUNTERS: tuple[str, ...] = (
    "pendingCount",
    "awaitingCapacityCount",
    "triggeredCount",
    "cancelledCount",
    "failedCount",
)

# The moves an item may make. A due item is triggered, waits for capacity or
# fails; a pause holds a waiting item, a resume releases it; a cancel ends every
# item not yet triggered. Triggered, cancelled and failed are final.
ITEM_EDGES: frozenset[tuple[ItemStatus, ItemStatus]] = frozenset(
    {
        ("pending", "triggered"),
        ("pending", "awaiting_capacity"),
        ("pending", "failed"),
        ("pending", "cancelled"),
        ("awaiting_capacity", "triggered"),
        ("awaiting_capacity", "failed"),
        ("awaiting_capacity", "batch_paused"),
        ("awaiting_capacity", "cancelled"),
        ("batch_paused", "awaiting_capacity"),
        ("batch_paused", "triggered"),
        ("batch_paused", "failed"),
        ("batch_paused", "cancelled"),
    }
)
