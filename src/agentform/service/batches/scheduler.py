"""The batch scheduler: runs batches on the service's clock through durable jobs.

- `advance(conn, batch_id)` brings a pending or running batch up to the clock:
  the items whose slice has come fall due (`awaiting_capacity`), a batch whose
  first slice has come starts (BATCH_STARTED), waiting items are triggered as
  capacity allows, a batch with nothing left to trigger completes
  (BATCH_COMPLETED), and the next release is scheduled as a job (one per
  batch, keyed, so a pause or cancel drops it).
- `fill(conn, org_id)` triggers the organization's waiting items, oldest due
  first, while it has capacity. It runs after a release, and once capacity came
  free: an execution that stops holding it (after the executions queued with
  `onCapacityLimit: "queue"` had their turn) schedules one fill job of its
  organization, due at once, which every other execution ending before it runs
  shares. A fill settles the items it triggered in one statement per batch.

Everything happens inside one write transaction per step, so the counters a
reader sees always add up, and a restart resumes from the jobs table:
nothing triggered twice, nothing skipped.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentform.rules.batch_schedule import next_release_at, released_count
from agentform.rules.batch_statuses import next_status
from agentform.service.batches.triggering import Trigger
from agentform.service.executions.lifecycle import on_capacity_freed
from agentform.service.runtime import RunContext
from agentform.service.store import batch_items, batch_writes, batches, execution_capacity, jobs
from agentform.service.store.batches import BatchRow
from agentform.service.store.database import Conn
from agentform.service.store.events import append_event

RELEASE_JOB = "batch.release"


def _release_key(batch_id: str) -> str:
    return f"batch-release:{batch_id}"


def advance(conn: Conn, batch_id: str) -> None:
    state = batches.batch_state(conn, batch_id)
    if state is None or state.status not in ("pending", "running"):
        return  # paused, completed or cancelled: nothing falls due
    now = conn.now()
    config, total, origin = state.config, state.total_count, state.schedule_origin
    released = released_count(config, total, origin, now)
    if released > state.released_count:
        due = range(state.released_count, released)
        batch_items.move_items(
            conn, batch_id, "pending", "awaiting_capacity", indexes=due, due_at=now
        )
        batch_writes.set_batch(conn, batch_id, released_count=released)
    if released and not state.started:
        _start(conn, state)
    upcoming = next_release_at(config, total, origin, now)
    if upcoming is not None:
        jobs.schedule(
            conn, RELEASE_JOB, upcoming, {"batchId": batch_id}, key=_release_key(batch_id)
        )
    touched = fill(conn, state.organization_id)
    complete_settled(conn, {batch_id, *touched})


def stop(conn: Conn, batch_id: str) -> None:
    """Drops the batch's next release (it is paused or cancelled)."""
    jobs.cancel(conn, _release_key(batch_id))


def fill(conn: Conn, org_id: str) -> set[str]:
    """Triggers waiting items, oldest due first, while the organization has capacity;
    returns the batches whose items moved."""
    free = execution_capacity.room(conn, org_id)
    trigger = Trigger(conn, org_id)
    touched: set[str] = set()
    busy: set[str] = set()  # pools whose every profile is in use: their items keep their place
    while free > 0:
        chunk = batch_items.oldest_waiting(conn, org_id, limit=free, skip_pools=busy)
        if not chunk:
            break
        settled: list[batch_items.Settled] = []
        try:
            for item in chunk:
                if item.pool_id in busy:
                    continue  # found busy earlier in this chunk
                outcome = trigger(item, room=free)
                if outcome.full or (outcome.waits and item.pool_id is None):
                    return touched
                if outcome.waits:
                    busy.add(str(item.pool_id))
                    continue
                settled.append(batch_items.Settled(item, outcome.execution_id, outcome.failure))
                touched.add(item.batch_id)
                if outcome.execution_id is not None:
                    free -= 1
        finally:  # the chunk's items are settled before anything reads them again
            batch_items.settle_items(conn, settled)
    return touched


def complete_settled(conn: Conn, batch_ids: Iterable[str]) -> None:
    """Completes each running batch that has nothing left to trigger."""
    for batch_id in sorted(batch_ids):
        state = batches.batch_state(conn, batch_id)
        if state is None or state.status != "running" or state.unsettled_count:
            continue
        batch_writes.set_batch(conn, batch_id, status=next_status(state.status, "complete"))
        _emit(
            conn,
            state,
            "BATCH_COMPLETED",
            triggered_count=state.triggered_count,
            cancelled_count=state.cancelled_count,
        )


def _start(conn: Conn, state: BatchRow) -> None:
    """The first slice has come: the batch runs (it may already, after a resume)."""
    status = next_status(state.status, "start") if state.status == "pending" else state.status
    batch_writes.set_batch(conn, state.id, status=status, started_at=conn.now())
    _emit(conn, state, "BATCH_STARTED")


def _emit(conn: Conn, state: BatchRow, event: str, **counts: int) -> None:
    append_event(
        conn,
        organization_id=state.organization_id,
        agent_id=state.agent_id,
        event=event,
        payload={
            "batch_id": state.id,
            "batch_name": state.name,
            "item_count": state.total_count,
            **counts,
        },
        batch_id=state.id,
    )


def release_job(job: jobs.Job, conn: Conn, context: RunContext) -> None:
    """The handler of `RELEASE_JOB`."""
    advance(conn, job.payload["batchId"])


FILL_JOB = "batch.fill"


def _fill_key(org_id: str) -> str:
    return f"batch-fill:{org_id}"


@on_capacity_freed
def _capacity_freed(conn: Conn, org_id: str) -> None:
    request_fill(conn, org_id)


def request_fill(conn: Conn, org_id: str) -> None:
    """Capacity came free: the organization's waiting items get it in one fill, a job
    due now under one key per organization. It runs after the work already due at this
    moment (due order), so the executions ending together (a wave of a batch's
    executions) cause one fill, not one each; an organization with nothing waiting
    schedules nothing."""
    key = _fill_key(org_id)
    if batch_items.has_waiting(conn, org_id) and jobs.pending_job(conn, key) is None:
        jobs.schedule(conn, FILL_JOB, conn.now(), {"organizationId": org_id}, key=key)


def fill_job(job: jobs.Job, conn: Conn, context: RunContext) -> None:
    """The handler of `FILL_JOB`."""
    complete_settled(conn, fill(conn, job.payload["organizationId"]))


def fill_everywhere(conn: Conn) -> None:
    """`fill` for every organization with waiting items (on start: a seed may have raised
    an organization's capacity)."""
    for org_id in batch_items.organizations_with_waiting_items(conn):
        complete_settled(conn, fill(conn, org_id))
