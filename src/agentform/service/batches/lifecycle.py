"""What a caller does to a batch: create, pause, resume, cancel
(docs/service/contract.md#execution-batches).

Each runs in the caller's write transaction and moves the batch only along
the edges of `rules.batch_statuses` (`next_status`: a refused move is 409). The
schedule itself is the scheduler's (`scheduler.advance`).
"""

from __future__ import annotations

from agentform.core.problems import RuleViolation
from agentform.rules.batch_schedule import shift_origin
from agentform.rules.batch_statuses import (
    BatchAction,
    BatchStatus,
    ItemStatus,
    TransitionRefused,
    next_status,
)
from agentform.rules.batches import check_items, parse_items
from agentform.rules.execute import AgentVersions, ExecuteRequest
from agentform.service.batches import scheduler
from agentform.service.errors import ServiceError, bad_request, conflict
from agentform.service.models.batches import BatchCreate, ExecutionBatch
from agentform.service.store import agents, batch_items, batch_writes, batches
from agentform.service.store.batches import BatchRow
from agentform.service.store.database import Conn
from agentform.service.store.executions import OrganizationData

NOT_TRIGGERED: tuple[ItemStatus, ...] = ("pending", "awaiting_capacity", "batch_paused")


def _bad_request(violation: RuleViolation) -> ServiceError:
    return bad_request(violation.problems)


def parse(body: BatchCreate) -> list[ExecuteRequest]:
    """The items' shapes (no transaction needed): 400 naming every item at fault."""
    try:
        return parse_items(body.items)
    except RuleViolation as exc:
        raise _bad_request(exc) from None


def create(
    conn: Conn, org_id: str, body: BatchCreate, items: list[ExecuteRequest]
) -> ExecutionBatch:
    """Checks the items against the organization, writes the batch with every item, and
    brings it up to the clock (a `startAt` already past starts it now)."""
    try:
        agent = agents.get_agent(conn, org_id, body.agentId)
    except ServiceError as exc:
        if exc.status != 404:
            raise
        detail = f"no agent {body.agentId} in this organization"
        raise bad_request([("agentId", detail)]) from None
    try:
        check_items(
            items,
            AgentVersions(agent.versions, agent.publishedVersion),
            OrganizationData(conn, org_id),
        )
    except RuleViolation as exc:
        raise _bad_request(exc) from None
    group = _group(conn, org_id, body)
    batch_id = batch_writes.insert_batch(
        conn, org_id, agent.id, body.name, body.startAt, body.config, group, items
    )
    scheduler.advance(conn, batch_id)
    return batches.answer(conn, batch_id)


def _group(conn: Conn, org_id: str, body: BatchCreate) -> str | None:
    """The concurrency group the batch joins: one some batch of the organization is
    in (docs/service/choices.md#concurrency-groups), else a new one (None: its id)."""
    if body.concurrencyGroupId is None:
        return None
    group = str(body.concurrencyGroupId)
    if not batches.is_concurrency_group(conn, org_id, group):
        detail = (
            f"no batch of this organization is in concurrency group {group} "
            "(name the id of a batch that started one, or leave it out)"
        )
        raise bad_request([("concurrencyGroupId", detail)])
    return group


def _moved(state: BatchRow, action: BatchAction, *, start_due: bool = True) -> BatchStatus:
    try:
        return next_status(state.status, action, start_due=start_due)
    except TransitionRefused as exc:
        raise conflict(str(exc)) from None


def pause(conn: Conn, org_id: str, batch_id: object) -> ExecutionBatch:
    """Holds the due items and stops the schedule where it is."""
    state = batches.owned_state(conn, org_id, batch_id)
    status = _moved(state, "pause")
    batch_items.move_items(conn, state.id, "awaiting_capacity", "batch_paused")
    batch_writes.set_batch(conn, state.id, status=status, paused_at=conn.now())
    scheduler.stop(conn, state.id)
    return batches.answer(conn, state.id)


def resume(conn: Conn, org_id: str, batch_id: object) -> ExecutionBatch:
    """Releases the held items; the schedule goes on from where the pause stopped it
    (`shift_origin`), so it is `running`, or `pending` while its start is still ahead."""
    state = batches.owned_state(conn, org_id, batch_id)
    now = conn.now()
    paused_at = state.paused_at or now
    origin = shift_origin(state.schedule_origin, paused_at, now)
    status = _moved(state, "resume", start_due=now >= origin)
    batch_writes.set_batch(conn, state.id, status=status, paused_at=None, schedule_origin=origin)
    batch_items.move_items(conn, state.id, "batch_paused", "awaiting_capacity")
    scheduler.advance(conn, state.id)
    return batches.answer(conn, state.id)


def cancel(conn: Conn, org_id: str, batch_id: object) -> ExecutionBatch:
    """Every item not yet triggered is cancelled; executions already started run on."""
    state = batches.owned_state(conn, org_id, batch_id)
    status = _moved(state, "cancel")
    for frm in NOT_TRIGGERED:
        batch_items.move_items(conn, state.id, frm, "cancelled")
    batch_writes.set_batch(conn, state.id, status=status, paused_at=None)
    scheduler.stop(conn, state.id)
    return batches.answer(conn, state.id)
