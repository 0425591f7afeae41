"""`POST /webhooks/example-batch` (docs/service/contract.md#batch-notification-envelope,
#webhook-integrations): the documentation receiver.

Served outside `/agents/v2` and without an API key: the service itself (or
anyone) posts notifications to it. It does what a receiver must: verifies the
signature against the exact body bytes, answers 401 with the error body when
the signature is missing or matches no organization's signing key, and 204
otherwise.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, Response
from starlette.concurrency import run_in_threadpool

from agentform.rules.requests import MAX_BODY
from agentform.rules.signatures import SIGNATURE_HEADER, verify
from agentform.service.errors import ServiceError
from agentform.service.http.auth import database
from agentform.service.store.database import Database
from agentform.service.store.webhooks import public_keys

router = APIRouter(tags=["Documentation"])


@router.post("/webhooks/example-batch", status_code=204, response_class=Response)
async def example_batch(request: Request, db: Database = Depends(database)) -> Response:
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise ServiceError(400, f"the request body is larger than {MAX_BODY} bytes")
    signature = request.headers.get(SIGNATURE_HEADER)
    if not signature:
        raise ServiceError(401, f"missing {SIGNATURE_HEADER} header")
    keys = await run_in_threadpool(public_keys, db)  # SQLite stays off the event loop
    if not any(verify(body, signature, pem) for pem in keys):
        raise ServiceError(401, f"invalid {SIGNATURE_HEADER}: no signing key here made it")
    return Response(status_code=204)
