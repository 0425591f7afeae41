"""What happens to an execution: created, started, paused, resumed, cancelled, ended.

Every function here (and in `controls`, the API calls) runs inside the caller's write
transaction and makes the whole of one change there: the status move (checked by the
status machine), the events (docs/service/contract.md#events-and-payloads) it causes
(`append_event`, so their deliveries commit with it) and the jobs that carry it on
(`jobs.schedule`). Routes call these; `stepping` (the runtime's handlers) when a step
falls due. An execution has at most one pending step job and one timeout job, each under
its own key, so pausing or ending it is cancelling its step job.

When an execution stops holding capacity, `dispatch` starts the queued ones
that can start, oldest first, then offers the organization's capacity to every
registered capacity listener (execution batches).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from agentform.rules.execute import AgentVersions, ExecuteRequest, effective_version
from agentform.rules.webhook_events import EVENT_PAYLOAD_FIELDS
from agentform.service.errors import ServiceError
from agentform.service.executions.capacity import slot_for, slot_for_request
from agentform.service.executions.program import compile_program, failed_program
from agentform.service.executions.script import Script, ScriptError, render
from agentform.service.models.execution_status import check_move
from agentform.service.store import agent_scripts, execution_capacity, jobs
from agentform.service.store import executions as store
from agentform.service.store.database import Conn, iso, new_id
from agentform.service.store.events import append_event
from agentform.service.store.executions import ExecutionRow

STEP_JOB = "execution.step"
TIMEOUT_JOB = "execution.timeout"


@dataclass(frozen=True)
class Actor:
    """Who made an API call; events name the API key (`paused_by`, `cancelled_by`)."""

    key_id: str
    key_name: str


@dataclass(frozen=True)
class AgentToRun:
    id: str
    name: str
    organization_id: str
    versions: tuple[int, ...]
    published_version: int
    script: Script | None  # shared by every execution of this content: never changed

    @property
    def versions_rule(self) -> AgentVersions:
        return AgentVersions(self.versions, self.published_version)


def agent_to_run(conn: Conn, org_id: str, agent_id: object) -> AgentToRun:
    """The organization's agent with its script, else 404: read each time (one query),
    parsed once per stored content, so a new published version or script (a seed
    loaded again, by any process) is a new entry, never a stale one."""
    return _parsed(agent_scripts.stored_agent(conn, org_id, agent_id))


@functools.lru_cache(maxsize=256)
def _parsed(stored: agent_scripts.StoredAgent) -> AgentToRun:
    return AgentToRun(
        stored.id,
        stored.name,
        stored.organization_id,
        stored.versions,
        stored.published_version,
        Script.model_validate_json(stored.script) if stored.script is not None else None,
    )


class AtCapacity(ServiceError):
    """The execution cannot start now and the request did not ask to be queued."""

    def __init__(self, why: str) -> None:
        super().__init__(409, f'{why}; send onCapacityLimit: "queue" to queue the execution')


CapacityListener = Callable[[Conn, str], None]
_capacity_listeners: dict[str, CapacityListener] = {}


def on_capacity_freed(listener: CapacityListener) -> CapacityListener:
    """Registers `listener(conn, org_id)`, called in the same transaction whenever an
    execution of the organization stops holding capacity, after the queued ones had
    their turn (decorator; registering the same function again replaces it)."""
    _capacity_listeners[f"{listener.__module__}.{listener.__qualname__}"] = listener
    return listener


# -- creating and starting -----------------------------------------------------


def create_execution(
    conn: Conn,
    agent: AgentToRun,
    request: ExecuteRequest,
    *,
    created_by: Actor | None,
    batch_id: str | None = None,
    room: int | None = None,
) -> ExecutionRow:
    """A new execution of a valid request: started when capacity allows, queued when
    it does not and the request says `queue`, else AtCapacity (409), nothing written.

    A batch passes its `batch_id`, and `room`, how many more executions the
    organization may start now, which it has counted (None: counted here).
    """
    slot = slot_for_request(conn, agent.organization_id, request, room)
    if not slot.free and not request.queues_at_capacity:
        raise AtCapacity(slot.why)
    inputs = request.merged_inputs()
    try:
        program = compile_program(render(agent.script, inputs))
    except ScriptError as exc:
        program = failed_program(str(exc))
    execution_id = new_id()
    # Started at once, it is written started: one write of the row, not a write and a move.
    wake = _first_wake(conn, program) if slot.free else None
    profile = str(request.agentProfileId) if request.agentProfileId else None
    new = store.NewExecution(
        id=execution_id,
        organization_id=agent.organization_id,
        agent_id=agent.id,
        agent_name=agent.name,
        version=effective_version(request, agent.versions_rule),
        status="queued" if wake is None else "starting",
        inputs=inputs,
        metadata=request.metadata or {},
        request=request.as_sent(),
        program=program,
        agent_profile_id=profile if wake is None else slot.profile_id,
        agent_profile_pool_id=(
            str(request.agentProfilePoolId) if request.agentProfilePoolId else None
        ),
        temp_files=[{"id": str(f.id), "name": f.name} for f in request.tempFiles or ()],
        batch_id=batch_id,
        soft_timeout_mins=request.soft_timeout_mins,
        created_by=created_by.key_name if created_by else None,
        started_at=None if wake is None else conn.now_iso(),
        wake_at=None if wake is None else iso(wake),
    )
    store.insert(conn, new)
    row = store.inserted_row(new)
    if wake is not None:
        _schedule_run(conn, row, wake)
    return row


def _first_wake(conn: Conn, program: list[dict[str, Any]]) -> datetime:
    """When a program started now takes its first step."""
    return conn.now() + timedelta(seconds=program[0]["after"])


def _start(conn: Conn, row: ExecutionRow, profile_id: str | None) -> None:
    """A queued execution starts."""
    check_move(row.status, "starting")
    wake = _first_wake(conn, row.program)
    store.update(
        conn,
        row.id,
        status="starting",
        agent_profile_id=profile_id,
        started_at=conn.now_iso(),
        pc=0,
        wake_at=iso(wake),
    )
    _schedule_run(conn, row, wake)


def _schedule_run(conn: Conn, row: ExecutionRow, wake: datetime) -> None:
    """The jobs of a started execution: its first step, and its soft timeout if it has one."""
    schedule_step(conn, row, wake)
    if row.soft_timeout_mins is not None:
        due = conn.now() + timedelta(minutes=row.soft_timeout_mins)
        jobs.schedule(conn, TIMEOUT_JOB, due, {"executionId": row.id}, key=_timeout_key(row))


def dispatch(conn: Conn, org_id: str) -> None:
    """Starts the organization's queued executions that can start, oldest first, then
    offers what capacity is left to the capacity listeners."""
    for execution_id in execution_capacity.queued_ids(conn, org_id):
        row = _row(conn, execution_id)
        slot = slot_for(conn, org_id, row.agent_profile_id, row.agent_profile_pool_id)
        if slot.free:
            _start(conn, row, slot.profile_id)
        elif execution_capacity.is_full(conn, org_id):
            break  # the organization is full: nobody younger can start either
    for listener in list(_capacity_listeners.values()):
        listener(conn, org_id)


def dispatch_everywhere(conn: Conn) -> None:
    """`dispatch` for every organization with queued executions (on start: the seed may
    have raised a capacity, or a restart found capacity free)."""
    for org_id in execution_capacity.organizations_with_queued(conn):
        dispatch(conn, org_id)


# -- ending --------------------------------------------------------------------


def complete(conn: Conn, row: ExecutionRow, result: dict[str, Any]) -> None:
    end(conn, row, "completed", result=json.dumps(result))
    emit(conn, row, "EXECUTION_COMPLETED", result)


def fail(conn: Conn, row: ExecutionRow, reason: str) -> None:
    end(conn, row, "failed", failure_reason=reason)
    emit(conn, row, "EXECUTION_FAILED", {"reason": reason})


def end(conn: Conn, row: ExecutionRow, final: str, **columns: Any) -> None:
    """A terminal move: nothing more is due for it, and its capacity goes to the next."""
    jobs.cancel(conn, step_key(row))
    jobs.cancel(conn, _timeout_key(row))
    move(conn, row, final, terminal_at=conn.now_iso(), wake_at=None, remaining=None, **columns)
    if row.status != "queued":
        dispatch(conn, row.organization_id)


# -- the mechanics -------------------------------------------------------------


def emit(conn: Conn, row: ExecutionRow, event: str, payload: dict[str, Any]) -> None:
    """An execution event (docs/service/contract.md#events-and-payloads), at this
    moment, in this transaction, with exactly the payload fields the contract lists
    (anything else is a defect, refused)."""
    fields = EVENT_PAYLOAD_FIELDS[event]
    given = set(payload)
    if not set(fields.required) <= given <= {*fields.required, *fields.optional}:
        raise ValueError(
            f"{event} payload fields {sorted(given)} are not those of "
            "docs/service/contract.md#events-and-payloads"
        )
    append_event(
        conn,
        organization_id=row.organization_id,
        agent_id=row.agent_id,
        execution_id=row.id,
        batch_id=row.batch_id,
        event=event,
        payload=payload,
        metadata=row.metadata,
    )


def move(conn: Conn, row: ExecutionRow, wanted: str, **columns: Any) -> None:
    """The status move from what the execution is now (read again: a step may have moved it)."""
    current = _row(conn, row.id).status
    check_move(current, wanted)
    store.update(conn, row.id, status=wanted, **columns)


def _row(conn: Conn, execution_id: str) -> ExecutionRow:
    found = store.row(conn, execution_id)
    assert found is not None, execution_id
    return found


def schedule_step(conn: Conn, row: ExecutionRow, wake: datetime) -> None:
    """The execution's next step job (replacing any pending one: one per execution)."""
    jobs.schedule(conn, STEP_JOB, wake, {"executionId": row.id}, key=step_key(row))


def step_key(row: ExecutionRow) -> str:
    return f"execution:{row.id}:step"


def _timeout_key(row: ExecutionRow) -> str:
    return f"execution:{row.id}:timeout"
