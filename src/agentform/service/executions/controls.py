"""The calls that change a running execution: pause, resume, cancel, a user message, and
the soft timeout falling due (docs/service/contract.md#executions). Each checks the
status first (409 where it does not allow the call) and makes its change through
`lifecycle`."""

from __future__ import annotations

from datetime import timedelta

from agentform.service.errors import ServiceError
from agentform.service.executions.lifecycle import (
    Actor,
    emit,
    end,
    fail,
    move,
    schedule_step,
    step_key,
)
from agentform.service.models.execution_status import (
    CANCELLABLE,
    MESSAGEABLE,
    PAUSABLE,
    RESUMABLE,
    is_terminal,
)
from agentform.service.store import executions as store
from agentform.service.store import jobs
from agentform.service.store.database import Conn, iso, parse_iso
from agentform.service.store.executions import ExecutionRow


def _refuse(row: ExecutionRow, what: str) -> ServiceError:
    return ServiceError(409, f"an execution that is {row.status} cannot be {what}")


def pause(conn: Conn, row: ExecutionRow, by: Actor) -> str:
    if row.status not in PAUSABLE:
        raise _refuse(row, "paused")
    remaining = _seconds_until(conn, row.wake_at)
    jobs.cancel(conn, step_key(row))
    move(conn, row, "paused", wake_at=None, remaining=remaining, paused_by=by.key_name)
    emit(
        conn,
        row,
        "EXECUTION_PAUSED",
        {"reason": "paused through the API", "paused_by": by.key_name},
    )
    return "paused"


def resume(conn: Conn, row: ExecutionRow, by: Actor) -> str:
    if row.status not in RESUMABLE:
        raise _refuse(row, "resumed")
    carry_on(conn, row, "resumed through the API")
    return "running"


def carry_on(conn: Conn, row: ExecutionRow, reason: str) -> None:
    """Back to running: the wait that was interrupted goes on for what was left of it."""
    wake = conn.now() + timedelta(seconds=row.remaining or 0.0)
    move(conn, row, "running", wake_at=iso(wake), remaining=None)
    schedule_step(conn, row, wake)
    emit(conn, row, "EXECUTION_RESUMED", {"reason": reason})


def cancel(conn: Conn, row: ExecutionRow, by: Actor) -> str:
    if row.status not in CANCELLABLE:
        raise _refuse(row, "cancelled")
    end(conn, row, "cancelled", cancelled_by=by.key_name)
    emit(
        conn,
        row,
        "EXECUTION_CANCELLED",
        {"reason": "cancelled through the API", "cancelled_by": by.key_name},
    )
    return "cancelled"


def user_message(conn: Conn, row: ExecutionRow, by: Actor, message: str) -> str:
    """Records the message (USER_MESSAGE_RECEIVED); one awaiting confirmation takes it as
    the answer and runs on. Returns the status after it."""
    if row.status not in MESSAGEABLE:
        raise _refuse(row, "sent a message")
    was = str(row.status)
    answers = was == "awaiting_confirmation"
    payload = {
        "user_id": by.key_id,
        "message": message,
        "execution_was": was,
        "injected_into": "confirmation" if answers else "next_step",
    }
    emit(conn, row, "USER_MESSAGE_RECEIVED", payload)
    if answers:
        carry_on(conn, row, "a user message answered the confirmation")
        return "running"
    return was


def time_out(conn: Conn, execution_id: str) -> None:
    """The soft timeout fell due: an execution still going fails, saying so."""
    row = store.row(conn, execution_id)
    if row is None or is_terminal(row.status) or row.status == "queued":
        return
    minutes = row.soft_timeout_mins
    fail(conn, row, f"the soft timeout of {minutes:g} minutes was reached")


def _seconds_until(conn: Conn, moment: str | None) -> float:
    if moment is None:
        return 0.0
    return max(0.0, (parse_iso(moment) - conn.now()).total_seconds())
