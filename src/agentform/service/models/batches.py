"""Wire models of execution batches (docs/service/contract.md#execution-batches, #batch-object).

The request's field rules are the shared ones of `agentform.rules.batches`;
its items are execution requests, checked one by one with the execute rules
(`agentform.rules.execute`) so a problem names its item (`items[17].version`).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field, SkipValidation

from agentform.rules.batch_statuses import BatchStatus, ItemStatus
from agentform.rules.batches import ITEMS_LENGTH, BatchConfig, BatchName, StartAt
from agentform.rules.execute import ExecuteRequest
from agentform.service.models.base import Id, Request


class BatchCreate(Request):
    agentId: Id
    name: BatchName
    startAt: StartAt
    config: BatchConfig
    concurrencyGroupId: Id | None = Field(
        default=None,
        description="Batches sharing it share one concurrency budget; defaults to the batch's id.",
    )
    # Documented as execution requests, checked item by item by the execute rules
    # (not here), so that every problem is named `items[N].field`.
    items: Annotated[
        list[SkipValidation[ExecuteRequest]],
        ITEMS_LENGTH,
        Field(
            description="1 to 10,000 execution requests, each checked with the execute rules; "
            "an item does not say onCapacityLimit (a due item waits for capacity)."
        ),
    ]


class ExecutionBatch(BaseModel):
    id: str
    agentId: str
    name: str
    status: BatchStatus
    config: BatchConfig
    concurrencyGroupId: str
    startAt: str
    createdAt: str
    updatedAt: str
    totalCount: int
    pendingCount: int = Field(description="Items not yet due, or held by a pause.")
    awaitingCapacityCount: int = Field(description="Items due, waiting for capacity.")
    triggeredCount: int = Field(description="Items whose execution was started.")
    cancelledCount: int
    failedCount: int = Field(description="Items that could not be triggered; not retried.")


class BatchItem(BaseModel):
    id: str
    index: int
    status: ItemStatus
    request: dict[str, Any] = Field(description="The item's execution request as created.")
    executionId: str | None = None
    triggeredAt: str | None = None
    failureReason: str | None = None
