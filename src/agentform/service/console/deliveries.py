"""The console's deliveries: the filtered list (`/console/deliveries`, the same as
`GET /agentform/v1/webhook-deliveries`), and a delivery's page: every attempt,
the signature header and the body of its last attempt (the exact bytes,
formatted), and Resend for an admin session.

The body and signature are made again as the sender makes them
(`delivery.sending.body_of`, `rules.signatures.sign`: RSA PKCS#1 v1.5 signs the
same bytes the same way), so they are those of the last attempt. The custom
headers of the integration are named, never shown: their values are secrets.
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Literal

from fastapi import Depends, Query, Request, Response
from fastapi.responses import RedirectResponse

from agentform.rules.signatures import SIGNATURE_HEADER, sign
from agentform.service.console.access import admin_form, page_router, signed_in
from agentform.service.console.render import page, query
from agentform.service.console.sessions import Session
from agentform.service.delivery.resend import resend
from agentform.service.delivery.sending import body_of
from agentform.service.errors import ServiceError
from agentform.service.http.binding import CONSOLE_PATH
from agentform.service.http.paging import time_param
from agentform.service.store import console_reads as reads
from agentform.service.store import delivery_history
from agentform.service.store.database import Conn, Database
from agentform.service.store.delivery_history import DeliveryFilter, StoredDelivery
from agentform.service.store.webhooks import integration_target, owned_integration_id, signing_key

Status = Literal["", "pending", "delivered", "failed"]


router = page_router()


@router.get("/deliveries")
def list_page(
    request: Request,
    integration: str = Query("", max_length=64),
    status: Status = Query(""),
    since: str = Query("", max_length=64),
    session: Session = Depends(signed_in),
) -> Response:
    db: Database = request.app.state.db
    org = session.organization_id
    with db.read() as conn:
        integrations = reads.integrations(conn, org)
        try:
            owned = owned_integration_id(conn, org, integration) if integration else None
            which = DeliveryFilter(org, owned, status or None, time_param("since", since or None))
            rows = delivery_history.list_with_attempts(conn, which)
            problem = None
        except ServiceError as exc:
            rows, problem = [], "; ".join(f"{f}: {p}" for f, p in exc.errors) or exc.message
    api = query(
        "/agentform/v1/webhook-deliveries",
        integrationId=integration,
        status=status,
        since=since,
        limit=delivery_history.MAX_LISTED,
    )
    return page(
        request,
        "deliveries.html",
        session,
        status=400 if problem else 200,
        api=api,
        active="deliveries",
        deliveries=rows,
        problem=problem,
        filters={"integration": integration, "status": status, "since": since},
        integrations=integrations,
        integration_names={i.id: i.name for i in integrations},
        limit=delivery_history.MAX_LISTED,
    )


def _sent(request: Request, conn: Conn, stored: StoredDelivery) -> dict[str, Any]:
    """The body and signature header of the delivery's last (or next) attempt."""
    platform = request.app.state.settings.platform_url
    body = body_of(stored.notification, stored.event_id, platform, stored.unwrap)
    pair = signing_key(conn, stored.organization_id)
    target = integration_target(conn, stored.integration_id)
    return {
        "body": json.loads(body),
        "signature": sign(body, pair.private_pem) if pair else None,
        "signature_header": SIGNATURE_HEADER,
        "url": target[0] if target else None,
        "custom_headers": sorted(target[1]) if target else [],
    }


@router.get("/deliveries/{delivery_id}")
def delivery_page(
    request: Request, delivery_id: str, session: Session = Depends(signed_in)
) -> Response:
    db: Database = request.app.state.db
    org = session.organization_id
    with db.read() as conn:
        stored, shown = delivery_history.one_with_attempts(conn, org, _id(delivery_id))
        sent = _sent(request, conn, stored)
        names = {i.id: i.name for i in reads.integrations(conn, org)}
    api = query("/agentform/v1/webhook-deliveries", executionId=stored.execution_id)
    return page(
        request,
        "delivery.html",
        session,
        api=api,
        active="deliveries",
        delivery=shown,
        integration_name=names.get(stored.integration_id, stored.integration_id),
        resend_api=f"/agentform/v1/webhook-deliveries/{shown['id']}/resend",
        **sent,
    )


def _id(text: str) -> str:
    try:
        return str(uuid.UUID(text))
    except ValueError:
        raise ServiceError(404, "webhook delivery not found") from None


@router.post("/deliveries/{delivery_id}/resend")
def resend_page(
    request: Request,
    delivery_id: str,
    action: tuple[Session, dict[str, str]] = Depends(admin_form),
) -> Response:
    session, _ = action
    db: Database = request.app.state.db
    with db.write() as conn:
        new_id = resend(conn, session.organization_id, _id(delivery_id))
    return RedirectResponse(f"{CONSOLE_PATH}/deliveries/{new_id}", status_code=303)
