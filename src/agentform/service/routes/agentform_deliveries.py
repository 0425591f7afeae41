"""agentform's own delivery operations (not the Agent Service API), under /agentform/v1:

- `GET /webhook-deliveries?integrationId=&status=&since=&executionId=&limit=`: the newest
  deliveries (at most 100), newest first, each with its attempts (time, status,
  duration, the answer's first bytes).
- `POST /webhook-deliveries/{deliveryId}/resend`: a new delivery of the same
  event, signed anew (service/delivery/resend.py); 201 with its id.
- `POST /webhook-deliveries/resend` `{integrationId?, since}`: the same for every
  failed delivery since a time (at most 1,000, oldest first).

All of it within the caller's organization: another organization's delivery
or integration is 404, as an unknown one.
"""

from __future__ import annotations

import uuid
from typing import Any, Literal

from fastapi import Depends, Query
from pydantic import Field

from agentform.service.delivery.resend import resend, resend_failed
from agentform.service.http.auth import Caller, caller, database
from agentform.service.http.gate import agentform_router
from agentform.service.http.paging import time_param
from agentform.service.models.base import Id, Request
from agentform.service.store import delivery_history
from agentform.service.store.database import Conn, Database
from agentform.service.store.delivery_history import DeliveryFilter
from agentform.service.store.webhooks import owned_integration_id

router = agentform_router(tags=["agentform"])
DELIVERIES = "/webhook-deliveries"


class ResendFailed(Request):
    integrationId: Id | None = None
    since: str = Field(max_length=64)


def _filter(
    conn: Conn,
    who: Caller,
    integration: object,
    status: str | None,
    since: str | None,
    execution: uuid.UUID | None = None,
) -> DeliveryFilter:
    org = who.organization_id
    owned = None if integration is None else owned_integration_id(conn, org, integration)
    return DeliveryFilter(org, owned, status, since, str(execution) if execution else None)


@router.get(DELIVERIES)
def list_deliveries(
    integrationId: uuid.UUID | None = None,
    status: Literal["pending", "delivered", "failed"] | None = None,
    since: str | None = Query(None, max_length=64),
    limit: int = Query(50, ge=1, le=delivery_history.MAX_LISTED),
    executionId: uuid.UUID | None = None,
    who: Caller = Depends(caller),
    db: Database = Depends(database),
) -> dict[str, Any]:
    after = time_param("since", since)
    with db.read() as conn:
        which = _filter(conn, who, integrationId, status, after, executionId)
        return {"items": delivery_history.list_with_attempts(conn, which, limit)}


@router.post(DELIVERIES + "/{deliveryId}/resend", status_code=201)
def resend_one(
    deliveryId: uuid.UUID, who: Caller = Depends(caller), db: Database = Depends(database)
) -> dict[str, Any]:
    with db.write() as conn:
        return {"deliveryIds": [resend(conn, who.organization_id, str(deliveryId))]}


@router.post(DELIVERIES + "/resend", status_code=201)
def resend_failed_since(
    body: ResendFailed, who: Caller = Depends(caller), db: Database = Depends(database)
) -> dict[str, Any]:
    after = time_param("since", body.since)
    with db.write() as conn:
        which = _filter(conn, who, body.integrationId, "failed", after)
        return {"deliveryIds": resend_failed(conn, which)}
