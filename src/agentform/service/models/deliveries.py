"""Wire models of webhook deliveries (docs/service/contract.md#webhook-integrations):
one notification to one integration."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

DeliveryStatus = Literal["pending", "delivered", "failed"]


class Delivery(BaseModel):
    id: str
    eventId: str
    event: str
    executionId: str | None = None
    batchId: str | None = None
    status: DeliveryStatus
    attempts: int
    lastResponseStatus: int | None = None
    lastError: str | None = None
    createdAt: str
    updatedAt: str
