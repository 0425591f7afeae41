"""The data of the `batches` kind (kinds/batches.py): a batch as its files declare
it (`BatchDesired`) and as it is compared, desired or live (`BatchState`), with
its start as the one instant text both sides are compared in (`iso`)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Annotated

from pydantic import Field

from agentform.core.frozen import FrozenMap
from agentform.kinds.batch_items import BatchItem
from agentform.kinds.model import DesiredModel, State
from agentform.rules.batches import CONFIG_TYPE, ITEMS_LENGTH, BatchConfig, BatchName, StartAt


class BatchDesired(DesiredModel):
    name: BatchName
    agent: str = Field(min_length=1, description="The agent's name (or id)")
    startAt: StartAt | None = Field(
        None,
        description="When executions start (RFC 3339 with an offset: 2026-12-01T02:00:00Z)",
    )
    config: BatchConfig | None = Field(
        None, description=f"How items are spread: {{type: {CONFIG_TYPE}, batchSize, batchInterval}}"
    )
    concurrencyGroupId: uuid.UUID | None = Field(
        None, description="Batches sharing it share one concurrency budget (default: its own)"
    )
    items: Annotated[list[BatchItem], ITEMS_LENGTH] | None = Field(
        None, description="1 to 10,000 execution requests"
    )
    itemsFile: str | None = Field(
        None, description="A CSV (a column per input) or JSON file of items, beside this file"
    )


class BatchState(State):
    agent: str
    name: str
    agentId: str
    startAt: str | None = None
    config: FrozenMap = {}
    concurrencyGroupId: str | None = None
    items: tuple[FrozenMap, ...] = ()  # live: only when read (pending, declared)
    itemCount: int = 0  # live: totalCount


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")
