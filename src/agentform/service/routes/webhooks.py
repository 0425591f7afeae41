"""Webhook integrations, attachments, deliveries and the signing key
(docs/service/contract.md#webhook-integrations).

Routes validate, call the store and answer; header values are accepted here
and never answered (reads carry digests).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Depends, Path, Response
from fastapi import Request as HttpRequest
from starlette.concurrency import run_in_threadpool

from agentform.rules.webhook_attachments import AttachmentSettings
from agentform.rules.webhook_integrations import INTEGRATIONS_PATH
from agentform.service.delivery.outbox import delivered_topic, enqueue_test
from agentform.service.errors import ServiceError
from agentform.service.http.auth import Caller, caller, database
from agentform.service.http.gate import api_router
from agentform.service.http.paging import ListQuery, Page, PageParams, page_params, search_query
from agentform.service.models.deliveries import Delivery
from agentform.service.models.webhooks import (
    Attachment,
    Integration,
    IntegrationCreate,
    IntegrationHealth,
    IntegrationUpdate,
    SigningKey,
    TestResult,
)
from agentform.service.settings import ServiceSettings
from agentform.service.store import deliveries, delivery_health
from agentform.service.store import webhooks as store
from agentform.service.store.database import Conn, Database

router = api_router(tags=["Webhooks"])
INTEGRATIONS = INTEGRATIONS_PATH
INTEGRATION = INTEGRATIONS + "/{integrationId}"


@router.get(INTEGRATIONS, response_model=Page[Integration])
def list_integrations(query: ListQuery = Depends(search_query)) -> Page[Integration]:
    with query.db.read() as conn:
        page = store.list_integrations(conn, query.who.organization_id, query.request)
        return page.model_copy(update={"items": [_with_health(conn, i) for i in page.items]})


@router.post(INTEGRATIONS, status_code=201, response_model=Integration)
def create_integration(
    body: IntegrationCreate, who: Caller = Depends(caller), db: Database = Depends(database)
) -> Integration:
    who.check_organization(body.organizationId)
    with db.write() as conn:
        made = store.create_integration(
            conn, who.organization_id, body.name, body.url, body.payloadVersion, body.headers
        )
        return _with_health(conn, made)


@router.get(INTEGRATION, response_model=Integration)
def get_integration(
    integrationId: uuid.UUID, who: Caller = Depends(caller), db: Database = Depends(database)
) -> Integration:
    with db.read() as conn:
        return _with_health(conn, store.get_integration(conn, who.organization_id, integrationId))


@router.patch(INTEGRATION, response_model=Integration)
def update_integration(
    body: IntegrationUpdate,
    integrationId: uuid.UUID,
    who: Caller = Depends(caller),
    db: Database = Depends(database),
) -> Integration:
    changes: dict[str, Any] = {k: getattr(body, k) for k in body.model_fields_set}
    with db.write() as conn:
        updated = store.update_integration(conn, who.organization_id, integrationId, changes)
        return _with_health(conn, updated)


def _with_health(conn: Conn, integration: Integration) -> Integration:
    """agentform's addition to an integration: whether its receiver is failing."""
    health = delivery_health.wire_health(conn, integration.id)
    return integration.model_copy(update={"health": health})


@router.delete(INTEGRATION, status_code=204, response_class=Response)
def delete_integration(
    integrationId: uuid.UUID, who: Caller = Depends(caller), db: Database = Depends(database)
) -> Response:
    with db.write() as conn:
        store.delete_integration(conn, who.organization_id, integrationId)
    return Response(status_code=204)


@router.post(INTEGRATION + "/test", response_model=TestResult)
async def test_integration(
    integrationId: uuid.UUID,
    request: HttpRequest,
    who: Caller = Depends(caller),
    db: Database = Depends(database),
) -> TestResult:
    """Sends EXECUTION_TEST through the outbox like any notification, then waits for
    its first attempt (at most the attempt's timeout and a margin, and only
    while the runtime runs: a stopping service answers at once) and answers
    the delivery as it then is: `pending` with no responseStatus when the attempt
    has not finished (retries go on; /deliveries shows them)."""
    delivery_id = deliveries.sequential_id(request.app.state.clock.now())
    settings: ServiceSettings = request.app.state.settings
    wait = settings.test_wait
    runner = request.app.state.runner
    if not runner.running:
        wait = 0  # nothing will make the attempt while this request waits
    loop, attempted = asyncio.get_running_loop(), asyncio.Event()
    topic = delivered_topic(delivery_id)

    def wake() -> None:  # on the thread that committed the attempt
        loop.call_soon_threadsafe(attempted.set)

    db.listen(topic, wake)  # before the delivery exists, so no attempt is missed
    try:
        await run_in_threadpool(_enqueue_test, db, who.organization_id, integrationId, delivery_id)
        if wait > 0:
            waits = [attempted.wait(), runner.stopping.wait()]
            if request.app.state.delivery_workers:  # attempted in another process: look
                waits.append(_attempt_recorded(db, delivery_id))
            await _first_of(wait, *waits)
    finally:
        db.unlisten(topic, wake)
    delivery = await run_in_threadpool(_delivery, db, delivery_id)
    health = await run_in_threadpool(_health, db, integrationId)
    return TestResult(
        deliveryId=delivery_id,
        status=delivery.status,
        responseStatus=delivery.lastResponseStatus,
        integrationHealth=health,
    )


async def _first_of(timeout: float, *waits: Coroutine[Any, Any, Any]) -> None:
    """Returns when the first of `waits` is done, or after `timeout` seconds."""
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()


ATTEMPT_POLL_SECONDS = 0.01


async def _attempt_recorded(db: Database, delivery_id: str) -> None:
    """Returns once a delivery worker has recorded an attempt of the delivery."""
    while True:
        found = await run_in_threadpool(_delivery, db, delivery_id)
        if found.attempts:
            return
        await asyncio.sleep(ATTEMPT_POLL_SECONDS)


def _enqueue_test(db: Database, org_id: str, integration_id: uuid.UUID, delivery_id: str) -> None:
    with db.write() as conn:
        enqueue_test(conn, org_id, integration_id, delivery_id)


def _delivery(db: Database, delivery_id: str) -> Delivery:
    with db.read() as conn:
        found = deliveries.get_delivery(conn, delivery_id)
    if found is None:  # a DELETE of the integration (its deliveries go with it) came first
        raise ServiceError(404, "webhook integration not found (deleted during its test)")
    return found


def _health(db: Database, integration_id: uuid.UUID) -> IntegrationHealth:
    with db.read() as conn:
        return delivery_health.wire_health(conn, str(integration_id))


def _paged_list(
    path: str, owner: str, model: type[Any], read: Callable[..., Page[Any]], name: str
) -> None:
    """A GET of one owner's page of `model`s (an integration's deliveries, its
    attachments, an agent's): the owner's id from the path, read in the caller's
    organization."""

    def route(
        owner_id: uuid.UUID = Path(alias=owner),
        paging: PageParams = Depends(page_params),
        who: Caller = Depends(caller),
        db: Database = Depends(database),
    ) -> Page[Any]:
        with db.read() as conn:
            return read(conn, who.organization_id, owner_id, paging)

    # The page's model is this route's: a value to FastAPI, which mypy cannot type.
    router.get(path, response_model=Page[model], name=name)(route)  # type: ignore[valid-type]


_paged_list(
    INTEGRATION + "/deliveries",
    "integrationId",
    Delivery,
    deliveries.list_deliveries,
    "list_deliveries",
)
_paged_list(
    INTEGRATION + "/attachments",
    "integrationId",
    Attachment,
    store.list_integration_attachments,
    "list_integration_attachments",
)
_paged_list(
    "/agents/{agentId}/webhooks",
    "agentId",
    Attachment,
    store.list_agent_attachments,
    "list_agent_attachments",
)


@router.put("/agents/{agentId}/webhooks/{integrationId}", response_model=Attachment)
def put_attachment(
    body: AttachmentSettings,
    agentId: uuid.UUID,
    integrationId: uuid.UUID,
    who: Caller = Depends(caller),
    db: Database = Depends(database),
) -> Attachment:
    with db.write() as conn:
        return store.put_attachment(conn, who.organization_id, agentId, integrationId, body)


@router.delete(
    "/agents/{agentId}/webhooks/{integrationId}", status_code=204, response_class=Response
)
def delete_attachment(
    agentId: uuid.UUID,
    integrationId: uuid.UUID,
    who: Caller = Depends(caller),
    db: Database = Depends(database),
) -> Response:
    with db.write() as conn:
        store.delete_attachment(conn, who.organization_id, agentId, integrationId)
    return Response(status_code=204)


@router.get("/webhook-signing-key", response_model=SigningKey)
def get_signing_key(who: Caller = Depends(caller), db: Database = Depends(database)) -> SigningKey:
    with db.read() as conn:
        pair = store.signing_key(conn, who.organization_id)
    if pair is None:  # its first use: the key pair is made now, once
        with db.write() as conn:
            pair = store.ensure_signing_key(conn, who.organization_id)
    return store.public_signing_key(pair)
