"""Executions (docs/service/contract.md#executions): their table, the queries the routes
and the runner make, row -> model.

An execution row carries its compiled program and where it is in it (`pc`,
`wake_at`, or `remaining` seconds while paused or awaiting confirmation), so
the runner needs nothing but the row to take the next step. Beside it:
`execution_lists` (the lists' queries), `execution_capacity`, `agent_scripts`,
`execution_files`.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from agentform.service.models.executions import Execution, ExecutionResult, Status
from agentform.service.store import temp_files
from agentform.service.store.common import fetch_owned, row_as, stored_json
from agentform.service.store.database import Conn, iso, parse_iso

_VERSIONS = uuid.UUID("0e2b6a4f-3c1d-4e8a-9b7f-5a6c2d1e0f93")


def workflow_version_id(agent_id: str, version: int) -> str:
    """A stable id for (agent, version): the public SDK's `workflowVersionId`."""
    return str(uuid.uuid5(_VERSIONS, f"{agent_id}:{version}"))


@dataclass(frozen=True)
class NewExecution:
    id: str
    organization_id: str
    agent_id: str
    agent_name: str
    version: int
    status: Status
    inputs: dict[str, Any]
    metadata: dict[str, str]
    request: dict[str, Any]
    program: list[dict[str, Any]]
    agent_profile_id: str | None
    agent_profile_pool_id: str | None
    temp_files: list[dict[str, str]]
    batch_id: str | None
    soft_timeout_mins: float | None
    created_by: str | None
    # Given when it starts at once (status `starting`): written with the row, not after it.
    started_at: str | None = None
    wake_at: str | None = None


def insert(conn: Conn, new: NewExecution) -> None:
    now = _creation_time(conn, new.organization_id)
    conn.execute(
        "INSERT INTO executions (id, organization_id, agent_id, agent_name, version, status,"
        " inputs, metadata, request, program, agent_profile_id, agent_profile_pool_id,"
        " temp_files, batch_id, soft_timeout_mins, created_by, started_at, wake_at, created_at,"
        " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            new.id,
            new.organization_id,
            new.agent_id,
            new.agent_name,
            new.version,
            new.status,
            json.dumps(new.inputs),
            json.dumps(new.metadata),
            json.dumps(new.request),
            json.dumps(new.program),
            new.agent_profile_id,
            new.agent_profile_pool_id,
            json.dumps(new.temp_files),
            new.batch_id,
            new.soft_timeout_mins,
            new.created_by,
            new.started_at,
            new.wake_at,
            now,
            now,
        ),
    )
    conn.executemany(
        "INSERT INTO execution_metadata (execution_id, organization_id, key, value, created_at)"
        " VALUES (?, ?, ?, ?, ?)",
        [(new.id, new.organization_id, k, v, now) for k, v in new.metadata.items()],
    )


def inserted_row(new: NewExecution) -> ExecutionRow:
    """The row `insert` wrote, as `row` would read it back (at the start of its program)."""
    return ExecutionRow(
        id=new.id,
        organization_id=new.organization_id,
        agent_id=new.agent_id,
        batch_id=new.batch_id,
        status=new.status,
        metadata=new.metadata,
        program=new.program,
        pc=0,
        wake_at=new.wake_at,
        remaining=None,
        soft_timeout_mins=new.soft_timeout_mins,
        agent_profile_id=new.agent_profile_id,
        agent_profile_pool_id=new.agent_profile_pool_id,
    )


def _creation_time(conn: Conn, org_id: str) -> str:
    """The clock's time, or a microsecond after the organization's last execution when
    the clock has not moved since: lists in creation order are the order of creation."""
    now = conn.now()
    last = conn.execute(
        "SELECT max(created_at) FROM executions WHERE organization_id = ?", (org_id,)
    ).fetchone()[0]
    if last is not None and parse_iso(last) >= now:
        now = parse_iso(last) + timedelta(microseconds=1)
    return iso(now)


@dataclass(frozen=True)
class ExecutionRow:
    """An execution as its behaviour reads it: whose, its status, and where it is in
    its program (`pc`; `wake_at` while waiting, `remaining` seconds while paused or
    awaiting confirmation)."""

    id: str
    organization_id: str
    agent_id: str
    batch_id: str | None
    status: Status
    metadata: dict[str, str]
    program: list[dict[str, Any]]
    pc: int
    wake_at: str | None
    remaining: float | None
    soft_timeout_mins: float | None
    agent_profile_id: str | None
    agent_profile_pool_id: str | None


def _state(r: sqlite3.Row) -> ExecutionRow:
    program, metadata = stored_json(r["program"]), stored_json(r["metadata"])
    return row_as(ExecutionRow, r, program=program, metadata=metadata)


def row(conn: Conn, execution_id: str) -> ExecutionRow | None:
    found = conn.execute("SELECT * FROM executions WHERE id = ?", (execution_id,)).fetchone()
    return None if found is None else _state(found)


def owned_row(conn: Conn, org_id: str, execution_id: object) -> ExecutionRow:
    """The organization's execution, else 404."""
    return _state(fetch_owned(conn, "executions", execution_id, org_id, "execution"))


def update(conn: Conn, execution_id: str, **columns: Any) -> None:
    columns["updated_at"] = conn.now_iso()
    sets = ", ".join(f"{name} = ?" for name in columns)
    conn.execute(f"UPDATE executions SET {sets} WHERE id = ?", (*columns.values(), execution_id))


def get(conn: Conn, org_id: str, execution_id: object) -> Execution:
    return execution_from_row(fetch_owned(conn, "executions", execution_id, org_id, "execution"))


def execution_from_row(r: sqlite3.Row) -> Execution:
    result = stored_json(r["result"]) if r["result"] else None
    duration = None
    if r["started_at"] and r["terminal_at"]:
        duration = (parse_iso(r["terminal_at"]) - parse_iso(r["started_at"])).total_seconds()
    return Execution(
        id=r["id"],
        agentId=r["agent_id"],
        organizationId=r["organization_id"],
        status=r["status"],
        version=r["version"],
        inputs=stored_json(r["inputs"]),
        metadata=stored_json(r["metadata"]),
        agentProfileId=r["agent_profile_id"],
        agentProfilePoolId=r["agent_profile_pool_id"],
        batchId=r["batch_id"],
        result=result["result"] if result and r["status"] == "completed" else None,
        failureReason=r["failure_reason"],
        createdAt=r["created_at"],
        startedAt=r["started_at"],
        terminalAt=r["terminal_at"],
        pausedBy=r["paused_by"],
        cancelledBy=r["cancelled_by"],
        workflowId=r["agent_id"],
        workflowVersionId=workflow_version_id(r["agent_id"], r["version"]),
        workflowVersion=r["version"],
        agentName=r["agent_name"],
        workflowName=r["agent_name"],
        executionResult=_result(r, result),
        duration=duration,
    )


def _result(r: sqlite3.Row, result: dict[str, Any] | None) -> ExecutionResult | None:
    """How it ended, as the public SDK reads it; a failure is outcome `failure`."""
    if r["status"] == "completed" and result is not None:
        outcome, reasoning, value = result["outcome"], result["reasoning"], result["result"]
    elif r["status"] == "failed":
        outcome, reasoning, value = "failure", r["failure_reason"] or "", None
    else:
        return None
    return ExecutionResult(
        id=str(uuid.uuid5(_VERSIONS, "result:" + r["id"])),
        executionId=r["id"],
        outcome=outcome,
        reasoning=reasoning,
        result=value,
        createdAt=r["terminal_at"],
    )


# -- what the execute rules read -----------------------------------------------


class OrganizationData:
    """The execute rules' `OrganizationLookup`, answered from the store."""

    def __init__(self, conn: Conn, org_id: str) -> None:
        self.conn = conn
        self.org_id = org_id

    def profile_exists(self, profile_id: str) -> bool:
        return self._exists("profiles", profile_id, "")

    def pool_exists(self, pool_id: str) -> bool:
        return self._exists("profile_sets", pool_id, "AND collection = 'pool'")

    def staged_file_name(self, file_id: str) -> str | None:
        return temp_files.staged_file_name(self.conn, self.org_id, file_id)

    def _exists(self, table: str, row_id: str, extra: str) -> bool:
        found = self.conn.execute(
            f"SELECT 1 FROM {table} WHERE id = ? AND organization_id = ? {extra}",
            (row_id, self.org_id),
        ).fetchone()
        return found is not None
