"""The runtime's handlers for executions: a step falls due, a soft timeout falls due.

A step job performs the program operation that fell due and every one right
after it (`after` 0) at the same moment, in one transaction, then schedules
itself for the next one; it stops at a confirmation (awaiting a user message)
and at the end. `service/job_handlers.py` registers the handlers.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from agentform.service.executions import controls, lifecycle
from agentform.service.executions.file_links import presigned_url
from agentform.service.runtime import RunContext
from agentform.service.settings import ServiceSettings
from agentform.service.store import execution_files
from agentform.service.store import executions as store
from agentform.service.store.database import Conn, iso
from agentform.service.store.executions import ExecutionRow
from agentform.service.store.jobs import Job


def step_job(job: Job, conn: Conn, context: RunContext) -> None:
    """The handler of `lifecycle.STEP_JOB`."""
    step(conn, job.payload["executionId"], context.settings)


def timeout_job(job: Job, conn: Conn, context: RunContext) -> None:
    """The handler of `lifecycle.TIMEOUT_JOB`."""
    controls.time_out(conn, job.payload["executionId"])


def step(conn: Conn, execution_id: str, settings: ServiceSettings) -> None:
    row = store.row(conn, execution_id)
    if row is None or row.status not in ("starting", "running"):
        return  # paused, awaiting or ended since: its step job was cancelled then
    program: list[dict[str, Any]] = row.program
    pc, status = row.pc, str(row.status)
    # Links point at the server notifications name (`platform_url`), outside its API path.
    platform = urlsplit(settings.platform_url)
    public_url = f"{platform.scheme}://{platform.netloc}"
    while pc < len(program):
        op = program[pc]
        if pc > row.pc and op["after"] > 0:
            break
        status = _perform(conn, row, op, public_url)
        pc += 1
        if status != "running":
            break
    following = float(program[pc]["after"]) if pc < len(program) else 0.0
    if status == "running":
        wake = conn.now() + timedelta(seconds=following)
        store.update(conn, execution_id, pc=pc, wake_at=iso(wake))
        lifecycle.schedule_step(conn, row, wake)
    elif status == "awaiting_confirmation":  # the wait to the next operation starts on the answer
        store.update(conn, execution_id, pc=pc, remaining=following)
    else:
        store.update(conn, execution_id, pc=pc)


def _perform(conn: Conn, row: ExecutionRow, op: dict[str, Any], public_url: str) -> str:
    """Does one operation; returns the execution's status after it."""
    kind = op["op"]
    if kind == "start":
        lifecycle.move(conn, row, "running")
        lifecycle.emit(conn, row, "EXECUTION_STARTED", {})
        return "running"
    if kind == "event":
        payload = dict(op["payload"])
        if "stamp" in op:
            payload[op["stamp"]] = conn.now_iso()
        lifecycle.emit(conn, row, op["event"], payload)
        return "running"
    if kind == "file":
        lifecycle.emit(conn, row, "EXECUTION_FILE_ADDED", _produce_file(conn, row, op, public_url))
        return "running"
    if kind == "confirm":
        lifecycle.move(conn, row, "awaiting_confirmation", wake_at=None)
        lifecycle.emit(conn, row, "EXECUTION_AWAITING_CONFIRMATION", {"reason": op["reason"]})
        return "awaiting_confirmation"
    if kind == "complete":
        keys = ("result", "reasoning", "outcome")
        lifecycle.complete(conn, row, {k: op[k] for k in keys})
        return "completed"
    if kind == "fail":
        lifecycle.fail(conn, row, op["reason"])
        return "failed"
    raise ValueError(f"unknown program operation {kind!r}")


def _produce_file(
    conn: Conn, row: ExecutionRow, op: dict[str, Any], public_url: str
) -> dict[str, Any]:
    spec, file_id = op["file"], op["file_id"]
    content = spec["content"].encode()
    execution_files.add_file(
        conn,
        file_id,
        row,
        name=spec["name"],
        mime_type=spec["mimeType"],
        source=spec["source"],
        content=content,
    )
    secret = execution_files.file_link_secret(conn)
    assert secret is not None
    return {
        "file_id": file_id,
        "file_name": spec["name"],
        "mime_type": spec["mimeType"],
        "file_size": len(content),
        "source": spec["source"],
        "presigned_url": presigned_url(secret, public_url, file_id, conn.now()),
    }
