"""Wire models of webhook integrations, their attachments and the signing key
(docs/service/contract.md#webhook-integrations).

Header values are accepted (`IntegrationCreate`, `IntegrationUpdate`) and never
answered: an `Integration` carries their digests. The field rules are the
shared ones of `agentform.rules.webhook_integrations` and `webhook_attachments`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from agentform.rules.webhook_attachments import AttachmentSettings
from agentform.rules.webhook_integrations import (
    PAYLOAD_VERSION,
    HeaderMap,
    IntegrationName,
    IntegrationUrl,
    PayloadVersion,
)
from agentform.service.models.base import Id, Request, omittable
from agentform.service.models.deliveries import DeliveryStatus


class HeaderDigest(BaseModel):
    digest: str


class IntegrationHealth(BaseModel):
    """agentform's own addition: `failing` after consecutive failed deliveries
    (docs/guide/webhooks.md#failing-receivers), until an attempt succeeds."""

    status: Literal["healthy", "failing"]
    consecutiveFailures: int
    failingSince: str | None = None


class Integration(BaseModel):
    id: str
    name: str
    url: str
    organizationId: str
    payloadVersion: str
    headers: dict[str, HeaderDigest]
    createdAt: str
    updatedAt: str
    health: IntegrationHealth | None = None  # agentform's addition, on every answer


class Attachment(AttachmentSettings):
    agentId: str
    integrationId: str
    createdAt: str
    updatedAt: str


class SigningKey(BaseModel):
    keyId: str
    algorithm: str
    publicKeyPem: str


class IntegrationCreate(Request):
    model_config = ConfigDict(hide_input_in_errors=True)  # header values are secrets
    name: IntegrationName
    url: IntegrationUrl
    headers: HeaderMap = {}
    payloadVersion: PayloadVersion = PAYLOAD_VERSION
    organizationId: Id | None = None


class IntegrationUpdate(Request):
    model_config = ConfigDict(hide_input_in_errors=True)
    name: IntegrationName = omittable()
    url: IntegrationUrl = omittable()
    headers: HeaderMap = omittable()


class TestResult(BaseModel):
    deliveryId: str
    status: DeliveryStatus
    responseStatus: int | None = None
    integrationHealth: IntegrationHealth | None = None  # as it was before the test
