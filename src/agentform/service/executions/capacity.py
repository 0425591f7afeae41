"""Capacity (docs/service/contract.md#execute-request): whether one more execution may
start now, and with which profile.

An organization runs at most its `maxConcurrentExecutions` (seed; default 10)
executions at once: starting, running, paused or awaiting confirmation. An
execution on a pool also needs a profile of the pool that no live execution
uses, unless the pool allows concurrent use; then it picks one by the pool's
selection strategy (least or most recently used; never used counts as least).
A profile named directly is taken as given, in use or not.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentform.rules.execute import ExecuteRequest
from agentform.service.store import execution_capacity as store
from agentform.service.store.database import Conn


@dataclass(frozen=True)
class Slot:
    """Whether an execution may start now, with which profile, and if not, why."""

    free: bool
    profile_id: str | None = None
    why: str = ""


def slot_for(
    conn: Conn, org_id: str, profile_id: str | None, pool_id: str | None, room: int | None = None
) -> Slot:
    """`room`: how many more executions the organization may start, when the caller
    knows it (None: read here)."""
    if (store.room(conn, org_id) if room is None else room) <= 0:
        limit = store.capacity(conn, org_id)
        return Slot(False, why=f"the organization already runs {limit} executions, its maximum")
    if pool_id is None:
        return Slot(True, profile_id)
    pool = store.pool(conn, pool_id)
    if pool is None:
        return Slot(True)  # deleted while the execution waited: it runs without one
    candidates = store.pool_members(conn, pool_id)
    if not pool.allow_concurrent_use:
        busy = store.profiles_in_use(conn, candidates)
        candidates = [p for p in candidates if p not in busy]
        if not candidates:
            return Slot(False, why=f"every profile of pool '{pool.name}' is in use")
    if not candidates:
        return Slot(True)  # an empty pool that allows concurrent use
    used = store.last_used(conn, candidates)
    ranked = sorted(candidates, key=lambda p: used.get(p, ""))  # stable: ties keep member order
    chosen = ranked[-1] if pool.selection_strategy == "most_recently_used" else ranked[0]
    return Slot(True, chosen)


def slot_for_request(
    conn: Conn, org_id: str, request: ExecuteRequest, room: int | None = None
) -> Slot:
    profile = str(request.agentProfileId) if request.agentProfileId else None
    pool = str(request.agentProfilePoolId) if request.agentProfilePoolId else None
    return slot_for(conn, org_id, profile, pool, room)


def capacity_allows(conn: Conn, org_id: str, request: ExecuteRequest) -> bool:
    """Whether `request` would start at once (what a batch asks before triggering an item)."""
    return slot_for_request(conn, org_id, request).free
