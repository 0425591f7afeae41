"""The console's batches: the list (`/console/batches`, as `GET
/agents/v2/execution-batches`) and a batch's page: its counts, triggered and
failed over time as a chart drawn on the server, and its items with their
executions (as `GET /agents/v2/execution-batches/{id}/items`)."""

from __future__ import annotations

from fastapi import Depends, Query, Request, Response

from agentform.service.console.access import page_router, signed_in
from agentform.service.console.chart import progress_chart
from agentform.service.console.render import page, query
from agentform.service.console.sessions import Session
from agentform.service.store import batches
from agentform.service.store import console_reads as reads
from agentform.service.store.database import Database
from agentform.service.store.pages import PageParams, PageRequest, Sorting

PAGE_SIZE = 100


router = page_router()


@router.get("/batches")
def list_page(
    request: Request,
    page_number: int = Query(1, alias="page", ge=1, le=100_000),
    session: Session = Depends(signed_in),
) -> Response:
    db: Database = request.app.state.db
    order = PageRequest(PageParams(page_number, PAGE_SIZE), Sorting("created_at", True))
    with db.read() as conn:
        found = batches.list_batches(conn, session.organization_id, order)
        agents = dict(reads.agent_names(conn, session.organization_id))
    api = query(
        "/agents/v2/execution-batches",
        sortDirection="desc",
        page=page_number if page_number > 1 else None,
        pageSize=PAGE_SIZE,
    )
    return page(
        request,
        "batches.html",
        session,
        api=api,
        active="batches",
        batches=found.items,
        agents=agents,
        total=found.total,
        page_number=page_number,
        pages=max(1, -(-found.total // PAGE_SIZE)),
    )


@router.get("/batches/{batch_id}")
def batch_page(
    request: Request,
    batch_id: str,
    page_number: int = Query(1, alias="page", ge=1, le=100_000),
    session: Session = Depends(signed_in),
) -> Response:
    db: Database = request.app.state.db
    org = session.organization_id
    with db.read() as conn:
        batch = batches.get_batch(conn, org, batch_id[:64])
        items = batches.list_items(conn, org, batch.id, PageParams(page_number, PAGE_SIZE))
        chart = progress_chart(reads.batch_timeline(conn, batch.id))
        agents = dict(reads.agent_names(conn, org))
    api = query(
        f"/agents/v2/execution-batches/{batch.id}/items",
        page=page_number if page_number > 1 else None,
        pageSize=PAGE_SIZE,
    )
    return page(
        request,
        "batch.html",
        session,
        api=api,
        active="batches",
        batch=batch,
        agent_name=agents.get(batch.agentId, batch.agentId),
        items=items.items,
        total=items.total,
        page_number=page_number,
        pages=max(1, -(-items.total // PAGE_SIZE)),
        chart=chart,
        batch_api=f"/agents/v2/execution-batches/{batch.id}",
    )
