"""The console's overview (`/console/`): the organization, executions and deliveries
by status over the last hour and day, failing integrations, live batches, the
clock; on a manual clock, the form that moves it (an admin session's).

Moving the clock calls the API's own operation (`POST /agentform/v1/clock/advance`,
routes/agentform_clock.py) as the session's key, so its rules and answers are
the API's.
"""

from __future__ import annotations

from typing import Any, get_args

from fastapi import Depends, Request, Response
from pydantic import ValidationError

from agentform.service.clock import ManualClock
from agentform.service.console.access import admin_form, page_router, signed_in
from agentform.service.console.render import page, query
from agentform.service.console.sessions import Session
from agentform.service.errors import ServiceError
from agentform.service.http.auth import Caller
from agentform.service.models.deliveries import DeliveryStatus
from agentform.service.models.execution_status import STATUSES
from agentform.service.routes.agentform_clock import AdvanceRequest, advance_clock
from agentform.service.store import console_reads as reads
from agentform.service.store.database import Database, iso

DELIVERY_STATUSES: tuple[DeliveryStatus, ...] = get_args(DeliveryStatus)


def _overview(request: Request, session: Session) -> dict[str, Any]:
    db: Database = request.app.state.db
    clock = request.app.state.clock
    now = clock.now()
    org = session.organization_id
    with db.read() as conn:
        executions = [
            (label, reads.counts_since(conn, org, "executions", STATUSES, since))
            for label, since in reads.windows(now)
        ]
        deliveries = [
            (label, reads.counts_since(conn, org, "webhook_deliveries", DELIVERY_STATUSES, since))
            for label, since in reads.windows(now)
        ]
        integrations = reads.integrations(conn, org)
        batches = reads.live_batches(conn, org)
    statuses = [s for s in STATUSES if any(s in counts for _, counts in executions)]
    return {
        "clock": {"now": iso(now), "kind": "manual" if isinstance(clock, ManualClock) else "wall"},
        "executions": executions,
        "execution_statuses": statuses,
        "deliveries": deliveries,
        "delivery_statuses": DELIVERY_STATUSES,
        "failing": [i for i in integrations if i.failing_since],
        "integration_count": len(integrations),
        "batches": batches,
        "api": query(
            "/agents/v2/executions",
            createdAfter=iso(reads.windows(now)[1][1]),
            sortDirection="desc",
        ),
    }


router = page_router()


@router.get("/")
def overview(request: Request, session: Session = Depends(signed_in)) -> Response:
    data = _overview(request, session)
    return page(request, "overview.html", session, active="overview", advanced=None, **data)


def _caller(session: Session) -> Caller:
    return Caller(
        session.organization_id,
        session.organization_name,
        session.key_id,
        session.key_name,
        session.role,
    )


def _moved(answer: dict[str, Any]) -> str:
    moved = f"The clock moved {answer.get('advancedSeconds', 0):g} s; it is now {answer['now']}."
    if answer.get("until") is None:
        return moved
    held = "held" if answer.get("met") else "did not hold within the window"
    return f"{moved} The condition {held}: {answer['until']}."


@router.post("/clock/advance")
async def advance(
    request: Request, action: tuple[Session, dict[str, str]] = Depends(admin_form)
) -> Response:
    session, form = action
    fields = {
        k: form[k].strip() for k in ("duration", "until", "within") if form.get(k, "").strip()
    }
    try:
        body = AdvanceRequest(**fields)
    except ValidationError:
        raise ServiceError(400, "give a duration (such as 2m), or a condition") from None
    try:
        message = _moved(await advance_clock(body, request, _caller(session)))
        status = 200
    except ServiceError as exc:
        message, status = _problem(exc), exc.status
    data = _overview(request, session)
    return page(
        request,
        "overview.html",
        session,
        status=status,
        active="overview",
        advanced=message,
        **data,
    )


def _problem(exc: ServiceError) -> str:
    details = "; ".join(f"{field}: {text}" for field, text in exc.errors)
    return f"The clock did not move: {details or exc.message}"
