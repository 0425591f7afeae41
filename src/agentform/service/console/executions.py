"""The console's executions: the filtered list (`/console/executions`), its new rows
(`/console/executions/rows`, asked for by the page's script), and an execution's
page: its timeline of events with each webhook's routing decision, as
`agentform webhook explain` says it, and its deliveries.

The list is the API's own (`GET /agents/v2/executions`, newest first) with the
same filters, so it shows what the API answers, and says which call that is.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from fastapi import Depends, Query, Request, Response
from fastapi.responses import RedirectResponse

from agentform.service.console.access import page_router, signed_in
from agentform.service.console.render import fragment, page, query
from agentform.service.console.sessions import Session
from agentform.service.console.views import execution_view
from agentform.service.errors import ServiceError
from agentform.service.http.binding import CONSOLE_PATH
from agentform.service.http.paging import time_param
from agentform.service.models.execution_status import STATUSES
from agentform.service.store import console_reads as reads
from agentform.service.store import execution_lists
from agentform.service.store.database import Database

PAGE_SIZE = 50
COUNTED = 10_000
"""A list counts its matches up to this many, then says "more than" (a count of all
100,000 would cost more than the page)."""


@dataclass(frozen=True)
class Filters:
    """The list's filters as the form gives them (text), and as the store takes them."""

    status: str = ""
    agent: str = ""
    metadata: str = ""  # key=value
    pool: str = ""
    after: str = ""
    before: str = ""

    def store(self) -> execution_lists.ExecutionFilter:
        problems = []
        if self.status and self.status not in STATUSES:
            problems.append(("status", f"one of {', '.join(STATUSES)}"))
        key, equals, value = self.metadata.partition("=")
        if self.metadata and (not equals or not key.strip()):
            problems.append(("metadata", "key=value, such as team=payments"))
        for name, given in (("agent", self.agent), ("pool", self.pool)):
            if given and not _is_uuid(given):
                problems.append((name, "an id"))
        if problems:
            raise ServiceError(400, "; ".join(f"{f}: {p}" for f, p in problems), problems)
        return execution_lists.ExecutionFilter(
            agent_id=self.agent or None,
            statuses=(self.status,) if self.status else (),
            metadata=(key.strip(), value.strip()) if self.metadata else None,
            pool_id=self.pool or None,
            created_after=time_param("from", self.after or None),
            created_before=time_param("to", self.before or None),
        )

    def api(self, page_number: int = 1) -> str:
        key, _, value = self.metadata.partition("=")
        return query(
            "/agents/v2/executions",
            status=self.status,
            agentId=self.agent,
            metadataKey=key.strip() if self.metadata else None,
            metadataValue=value.strip() if self.metadata else None,
            agentProfilePoolId=self.pool,
            createdAfter=self.after,
            createdBefore=self.before,
            sortDirection="desc",
            page=page_number if page_number > 1 else None,
            pageSize=PAGE_SIZE,
        )

    def params(self) -> dict[str, str]:
        return {k: v for k, v in self.__dict__.items() if v}


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


def filters(
    status: str = Query("", max_length=40),
    agent: str = Query("", max_length=64),
    metadata: str = Query("", max_length=600),
    pool: str = Query("", max_length=64),
    after: str = Query("", alias="from", max_length=64),
    before: str = Query("", alias="to", max_length=64),
) -> Filters:
    return Filters(status, agent, metadata, pool, after.strip(), before.strip())


def _filter_error(
    request: Request, session: Session, which: Filters, exc: ServiceError
) -> Response:
    return page(
        request,
        "executions.html",
        session,
        status=400,
        active="executions",
        problem=exc.message,
        filters=which,
        rows=[],
        total=0,
        counted=COUNTED,
        page_number=1,
        pages=1,
        live=None,
        statuses=STATUSES,
        choices=_choices(request, session),
    )


def _choices(request: Request, session: Session) -> dict[str, list[tuple[str, str]]]:
    db: Database = request.app.state.db
    with db.read() as conn:
        return {
            "agents": reads.agent_names(conn, session.organization_id),
            "pools": reads.pool_names(conn, session.organization_id),
        }


router = page_router()


@router.get("/executions")
def list_page(
    request: Request,
    which: Filters = Depends(filters),
    page_number: int = Query(1, alias="page", ge=1, le=COUNTED // PAGE_SIZE + 1),
    id: str = Query("", max_length=64),
    session: Session = Depends(signed_in),
) -> Response:
    if id.strip():
        return RedirectResponse(f"{CONSOLE_PATH}/executions/{id.strip()}", status_code=303)
    try:
        where = which.store()
    except ServiceError as exc:
        return _filter_error(request, session, which, exc)
    db: Database = request.app.state.db
    org, offset = session.organization_id, (page_number - 1) * PAGE_SIZE
    with db.read() as conn:
        rows = execution_lists.newest_executions(conn, org, where, offset, PAGE_SIZE)
        total = execution_lists.count_executions(conn, org, where, COUNTED)
    newest = rows[0].createdAt if rows and page_number == 1 else None
    live = query(f"{CONSOLE_PATH}/executions/rows", **which.params()) if page_number == 1 else None
    return page(
        request,
        "executions.html",
        session,
        api=which.api(page_number),
        active="executions",
        problem=None,
        filters=which,
        rows=rows,
        total=total,
        counted=COUNTED,
        page_number=page_number,
        pages=max(1, -(-total // PAGE_SIZE)),
        live=live,
        newest=newest or "",
        statuses=STATUSES,
        choices=_choices(request, session),
    )


@router.get("/executions/rows")
def new_rows(
    request: Request,
    which: Filters = Depends(filters),
    after: str = Query("", max_length=64),
    session: Session = Depends(signed_in),
) -> Response:
    """The executions matching the filters created after `after` (newest first):
    rows for the list's script, and the newest one's time in `X-Console-Newest`."""
    later = max(after, which.after) if after and which.after else after or which.after
    where = Filters(**{**which.__dict__, "after": later}).store()
    db: Database = request.app.state.db
    with db.read() as conn:
        rows = execution_lists.newest_executions(conn, session.organization_id, where, 0, PAGE_SIZE)
    shown = fragment("execution_rows.html", rows=rows)
    if rows:
        shown.headers["X-Console-Newest"] = rows[0].createdAt
    return shown


@router.get("/executions/{execution_id}")
def execution_page(
    request: Request, execution_id: str, session: Session = Depends(signed_in)
) -> Response:
    db: Database = request.app.state.db
    with db.read() as conn:
        data = execution_view(conn, session.organization_id, execution_id[:64])
    shown = data["execution"].id
    return page(
        request,
        "execution.html",
        session,
        api=f"/agents/v2/executions/{shown}",
        active="executions",
        routing_api=f"/agentform/v1/executions/{shown}/routing",
        deliveries_api=query("/agentform/v1/webhook-deliveries", executionId=shown),
        **data,
    )
