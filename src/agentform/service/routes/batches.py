"""Execution batches (docs/service/contract.md#execution-batches): create, list, read,
items, pause, resume, cancel."""

from __future__ import annotations

import uuid

from fastapi import Depends, Query

from agentform.rules.batch_statuses import BatchStatus
from agentform.service.batches import lifecycle
from agentform.service.http.auth import Caller, caller, database
from agentform.service.http.gate import api_router
from agentform.service.http.paging import Page, PageParams, PageRequest, page_params
from agentform.service.models.batches import BatchCreate, BatchItem, ExecutionBatch
from agentform.service.store import agents, batches
from agentform.service.store.database import Database

router = api_router(prefix="/execution-batches", tags=["Execution Batches"])


@router.post("", status_code=201, response_model=ExecutionBatch)
def create_batch(
    body: BatchCreate, who: Caller = Depends(caller), db: Database = Depends(database)
) -> ExecutionBatch:
    """All items are checked before anything is written; the batch and its items are
    written in one transaction. A `startAt` already past starts it at once."""
    items = lifecycle.parse(body)  # shapes first: no write lock held while 10,000 parse
    with db.write() as conn:
        return lifecycle.create(conn, who.organization_id, body, items)


@router.get("", response_model=Page[ExecutionBatch])
def list_batches(
    agentId: uuid.UUID | None = Query(None, description="Only this agent's batches"),
    status: list[BatchStatus] | None = Query(None, description="Repeatable: any of these"),
    searchName: str | None = Query(None, description="Case-insensitive part of the name"),
    organizationId: uuid.UUID | None = Query(None, description="Another organization: 403"),
    paging: PageParams = Depends(page_params),
    who: Caller = Depends(caller),
    db: Database = Depends(database),
) -> Page[ExecutionBatch]:
    who.check_organization(organizationId)
    with db.read() as conn:
        agent_id = None
        if agentId is not None:
            agent_id = agents.get_agent(conn, who.organization_id, agentId).id  # 404 if not ours
        return batches.list_batches(
            conn,
            who.organization_id,
            PageRequest(paging, None, searchName),
            agent_id=agent_id,
            statuses=set(status or ()),
        )


@router.get("/{batchId}", response_model=ExecutionBatch)
def get_batch(
    batchId: uuid.UUID, who: Caller = Depends(caller), db: Database = Depends(database)
) -> ExecutionBatch:
    with db.read() as conn:
        return batches.get_batch(conn, who.organization_id, batchId)


@router.get("/{batchId}/items", response_model=Page[BatchItem], response_model_exclude_none=True)
def list_items(
    batchId: uuid.UUID,
    paging: PageParams = Depends(page_params),
    who: Caller = Depends(caller),
    db: Database = Depends(database),
) -> Page[BatchItem]:
    """The items in index order, each with its execution request as created."""
    with db.read() as conn:
        return batches.list_items(conn, who.organization_id, batchId, paging)


def _status_change(action: str, summary: str) -> None:
    """`POST /execution-batches/{batchId}/<action>`: 200 with the batch, 409 when the
    batch's status has no such move (docs/service/contract.md#batch-statuses)."""
    move = getattr(lifecycle, action)

    def change(
        batchId: uuid.UUID, who: Caller = Depends(caller), db: Database = Depends(database)
    ) -> ExecutionBatch:
        with db.write() as conn:
            batch: ExecutionBatch = move(conn, who.organization_id, batchId)
            return batch

    router.add_api_route(
        f"/{{batchId}}/{action}",
        change,
        methods=["POST"],
        response_model=ExecutionBatch,
        name=f"{action}_batch",
        summary=f"{action.capitalize()} Batch",
        description=summary,
    )


_status_change(
    "pause",
    "Due items are held (`batch_paused`) and the schedule stops; 409 unless pending or running.",
)
_status_change(
    "resume",
    "Held items are released and the schedule goes on where it stopped; 409 unless paused.",
)
_status_change(
    "cancel",
    "Every item not yet triggered is cancelled; started executions run on. 409 when final.",
)
