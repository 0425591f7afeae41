"""The console's webhook integrations (`/console/webhooks`): each one's URL, health,
and its attachments to agents with their event rules and filters, as `GET
/agents/v2/webhook-integrations` and each integration's attachments give them.
The integrations' custom header values are secrets and are not read here."""

from __future__ import annotations

from fastapi import Depends, Request, Response

from agentform.service.console.access import page_router, signed_in
from agentform.service.console.render import page
from agentform.service.console.sessions import Session
from agentform.service.store import console_reads as reads
from agentform.service.store.database import Database

router = page_router()


@router.get("/webhooks")
def integrations_page(request: Request, session: Session = Depends(signed_in)) -> Response:
    db: Database = request.app.state.db
    with db.read() as conn:
        found = reads.integrations(conn, session.organization_id)
    return page(
        request,
        "webhooks.html",
        session,
        api="/agents/v2/webhook-integrations?pageSize=100",
        active="webhooks",
        integrations=found,
    )
