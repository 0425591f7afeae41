"""Executions (docs/service/contract.md#executions): execute an agent, list and read
executions, pause, resume, cancel, and send them user messages. The rules live in
`rules.execute` and the lifecycle in `executions.lifecycle`; these handlers validate,
call, answer."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Annotated

from fastapi import Body, Depends, Query, Response

from agentform.core.problems import Problem
from agentform.rules.execute import ExecuteRequest, check_execute_request
from agentform.service.errors import ServiceError, bad_request
from agentform.service.executions import controls, lifecycle
from agentform.service.http.auth import Caller, caller, database
from agentform.service.http.gate import api_router
from agentform.service.http.paging import (
    EXCLUSIVE_TIME,
    Page,
    PageParams,
    PageRequest,
    SortDirection,
    page_params,
    sorting,
    time_param,
)
from agentform.service.models.executions import (
    Execution,
    ExecutionCreated,
    Status,
    StatusChange,
    UserMessage,
    UserMessageAccepted,
)
from agentform.service.store import execution_lists, executions
from agentform.service.store.database import Conn, Database
from agentform.service.store.executions import ExecutionRow

router = api_router(tags=["Execution"])


def actor(who: Caller) -> lifecycle.Actor:
    return lifecycle.Actor(who.key_id, who.key_name)


def invalid(problems: list[Problem]) -> ServiceError:
    return bad_request(problems)


@router.post(
    "/agents/{agentId}/execute",
    status_code=202,
    response_model=ExecutionCreated,
    tags=["Agents"],
    summary="Execute an agent",
)
def execute(
    agentId: uuid.UUID,
    response: Response,
    body: Annotated[ExecuteRequest | None, Body()] = None,
    who: Caller = Depends(caller),
    db: Database = Depends(database),
) -> ExecutionCreated:
    """Starts an execution (202 `{executionId, status}`): `starting` when it began at
    once, `queued` when it waits for capacity (only with `onCapacityLimit: "queue"`)."""
    body = body or ExecuteRequest()
    with db.write() as conn:
        agent = lifecycle.agent_to_run(conn, who.organization_id, agentId)
        problems = check_execute_request(
            body, agent.versions_rule, executions.OrganizationData(conn, who.organization_id)
        )
        if problems:
            raise invalid(problems)
        row = lifecycle.create_execution(conn, agent, body, created_by=actor(who))
    if body.uses_dynamic_data:
        response.headers["Deprecation"] = "true"
    return ExecutionCreated(executionId=row.id, status=row.status)


@router.get("/executions", response_model=Page[Execution], response_model_exclude_none=True)
def list_executions(
    agentId: uuid.UUID | None = Query(None),
    status: list[Status] | None = Query(None, description="Repeat for several (any of them)."),
    batchId: uuid.UUID | None = Query(None),
    metadataKey: str | None = Query(None, description="With metadataValue."),
    metadataValue: str | None = Query(None, description="With metadataKey."),
    agentProfilePoolId: uuid.UUID | None = Query(None),
    createdAfter: str | None = Query(None, max_length=64, **EXCLUSIVE_TIME),
    createdBefore: str | None = Query(None, max_length=64, **EXCLUSIVE_TIME),
    sortDirection: SortDirection | None = Query(None, description="By creation; asc default."),
    organizationId: uuid.UUID | None = Query(None),
    paging: PageParams = Depends(page_params),
    who: Caller = Depends(caller),
    db: Database = Depends(database),
) -> Page[Execution]:
    """The organization's executions matching every filter given, in creation order."""
    who.check_organization(organizationId)
    if (metadataKey is None) != (metadataValue is None):
        missing = "metadataValue" if metadataValue is None else "metadataKey"
        detail = "metadataKey and metadataValue go together"
        raise bad_request([(missing, detail)])
    where = execution_lists.ExecutionFilter(
        agent_id=str(agentId) if agentId else None,
        statuses=tuple(status or ()),
        batch_id=str(batchId) if batchId else None,
        metadata=(metadataKey, metadataValue)
        if metadataKey and metadataValue is not None
        else None,
        pool_id=str(agentProfilePoolId) if agentProfilePoolId else None,
        created_after=time_param("createdAfter", createdAfter),
        created_before=time_param("createdBefore", createdBefore),
    )
    order = PageRequest(paging, sorting("created_at", sortDirection))
    with db.read() as conn:
        return execution_lists.list_executions(conn, who.organization_id, where, order)


@router.get("/executions/{executionId}", response_model=Execution, response_model_exclude_none=True)
def get_execution(
    executionId: uuid.UUID, who: Caller = Depends(caller), db: Database = Depends(database)
) -> Execution:
    with db.read() as conn:
        return executions.get(conn, who.organization_id, executionId)


def _status_call(
    change: Callable[[Conn, ExecutionRow, lifecycle.Actor], str],
) -> Callable[..., StatusChange]:
    def call(
        executionId: uuid.UUID, who: Caller = Depends(caller), db: Database = Depends(database)
    ) -> StatusChange:
        with db.write() as conn:
            row = executions.owned_row(conn, who.organization_id, executionId)
            status = change(conn, row, actor(who))
        return StatusChange(executionId=str(executionId), status=status)

    return call


for _name, _change in (
    ("pause", controls.pause),
    ("resume", controls.resume),
    ("cancel", controls.cancel),
):
    router.add_api_route(
        f"/executions/{{executionId}}/{_name}",
        _status_call(_change),
        methods=["POST"],
        response_model=StatusChange,
        name=f"execution_{_name}",
        summary=f"{_name.capitalize()} an execution (409 where its status does not allow it)",
    )


@router.post(
    "/executions/{executionId}/user-messages",
    status_code=202,
    response_model=UserMessageAccepted,
)
def send_user_message(
    executionId: uuid.UUID,
    body: UserMessage,
    who: Caller = Depends(caller),
    db: Database = Depends(database),
) -> UserMessageAccepted:
    """Emits USER_MESSAGE_RECEIVED; an execution awaiting confirmation takes it as the answer."""
    with db.write() as conn:
        row = executions.owned_row(conn, who.organization_id, executionId)
        status = controls.user_message(conn, row, actor(who), body.message)
    return UserMessageAccepted(executionId=str(executionId), status=status)
