"""Execution batch rules (docs/service/contract.md#execution-batches), written once.

The service enforces them on `POST /execution-batches` and runs its scheduler
and status machine by them; the provisioner checks a workspace's `batches:`
with the same types. Everything here is pure: no clock, no database.

Here: the request's field types (`BatchConfig`, `BatchName`, `StartAt`, the item
count limits); the items are execution requests, checked by the execute rules
(`rules.execute`, not a copy) with each problem named `items[17].field`. The batch
status machine and the item statuses are rules/batch_statuses.py; the schedule
arithmetic is rules/batch_schedule.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime
from functools import cache
from typing import Annotated, Any, Literal, get_args

from annotated_types import Len
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema
from pydantic_core import PydanticCustomError

from agentform.core.problems import Problem, RuleViolation
from agentform.rules.execute import (
    AgentVersions,
    ExecuteRequest,
    OrganizationLookup,
    check_execute_request,
    parse_execute_request,
)
from agentform.rules.values import NAME_SCHEMA, OUT_OF_RANGE, PlainName, moment_problem

# -- the request --------------------------------------------------------------

ConfigType = Literal["timeBatching"]
CONFIG_TYPE: ConfigType = get_args(ConfigType)[0]
BATCH_SIZE_MIN, BATCH_SIZE_MAX = 1, 1_000
BATCH_INTERVAL_MIN, BATCH_INTERVAL_MAX = 1, 86_400
NAME_MIN, NAME_MAX = 1, 200
ITEMS_MIN, ITEMS_MAX = 1, 10_000

# `Annotated[list[...], ITEMS_LENGTH]`: 1 to 10,000 items, on both halves.
ITEMS_LENGTH = Len(ITEMS_MIN, ITEMS_MAX)


class BatchConfig(BaseModel):
    """`{type: "timeBatching", batchSize, batchInterval}`: from `startAt`, every
    `batchInterval` seconds the next `batchSize` items fall due."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    type: ConfigType = Field(
        description="The only batching type the service knows; any other value is refused."
    )
    batchSize: int = Field(
        ge=BATCH_SIZE_MIN, le=BATCH_SIZE_MAX, description="Items that fall due per interval."
    )
    batchInterval: int = Field(
        ge=BATCH_INTERVAL_MIN,
        le=BATCH_INTERVAL_MAX,
        description="Seconds between two slices of items.",
    )


BatchName = Annotated[
    str,
    Field(
        min_length=NAME_MIN,
        max_length=NAME_MAX,
        description="Unique per organization and agent among batches that are not cancelled.",
    ),
    PlainName,
    NAME_SCHEMA,
]


def parse_start_at(value: object) -> datetime:
    """An ISO 8601 date-time with its zone (`Z` or an offset), as an aware UTC datetime.

    A time without a zone is refused rather than guessed: the same file must
    mean the same instant on every machine that applies it.
    """
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        raise PydanticCustomError(
            "start_at", "must be a date and a time, e.g. 2026-12-01T02:00:00Z, not a date alone"
        )
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            raise PydanticCustomError(
                "start_at",
                "'{value}' is not an ISO 8601 date-time (e.g. 2026-12-01T02:00:00Z)",
                {"value": value[:64]},
            ) from None
    else:
        raise PydanticCustomError(
            "start_at", "must be an ISO 8601 date-time string (e.g. 2026-12-01T02:00:00Z)"
        )
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise PydanticCustomError(
            "start_at", "must say its time zone, e.g. 2026-12-01T02:00:00Z (UTC)"
        )
    try:
        moment = moment.astimezone(UTC)
    except OverflowError:  # 9999-12-31T23:59:59-01:00 is in the year 10000
        raise PydanticCustomError("start_at", OUT_OF_RANGE) from None
    problem = moment_problem(moment)
    if problem:
        raise PydanticCustomError("start_at", problem)
    return moment


StartAt = Annotated[
    datetime,
    BeforeValidator(parse_start_at),
    WithJsonSchema(
        {
            "type": "string",
            "format": "date-time",
            "description": "ISO 8601 date-time with its zone, e.g. 2026-12-01T02:00:00Z",
        }
    ),
]

# -- the items -----------------------------------------------------------------

# A 400 lists at most this many problems (10,000 bad items would make a 2 MB answer).
MAX_PROBLEMS_SHOWN = 100


def item_prefix(index: int) -> str:
    return f"items[{index}]"


def parse_items(items: Sequence[Any]) -> list[ExecuteRequest]:
    """Each item's shape by the execute rules; RuleViolation names every item at fault.

    One rule of batches comes on top: an item does not say `onCapacityLimit`,
    because a batch item that falls due at capacity always waits for it.
    """
    parsed: list[ExecuteRequest] = []
    problems: list[Problem] = []
    for index, item in enumerate(items):
        try:
            request = parse_execute_request(item, item_prefix(index))
        except RuleViolation as exc:
            problems.extend(exc.problems)
            continue
        if request.onCapacityLimit is not None:
            problems.append(
                Problem(
                    f"{item_prefix(index)}.onCapacityLimit",
                    "a batch item waits for capacity when it falls due; "
                    "onCapacityLimit is for a single execute",
                )
            )
        parsed.append(request)
    _raise_if_any(problems)
    return parsed


class CachedLookup:
    """An `OrganizationLookup` that asks the one it wraps once per id: a batch's
    10,000 items usually name a handful of pools."""

    def __init__(self, lookup: OrganizationLookup) -> None:
        self.profile_exists = cache(lookup.profile_exists)
        self.pool_exists = cache(lookup.pool_exists)
        self.staged_file_name = cache(lookup.staged_file_name)


def check_items(
    items: Sequence[ExecuteRequest], agent: AgentVersions, lookup: OrganizationLookup
) -> None:
    """The execute rules that read the organization, for every item; RuleViolation if any."""
    cached = CachedLookup(lookup)
    problems: list[Problem] = []
    for index, request in enumerate(items):
        problems.extend(check_execute_request(request, agent, cached, item_prefix(index)))
    _raise_if_any(problems)


def _raise_if_any(problems: list[Problem]) -> None:
    if len(problems) > MAX_PROBLEMS_SHOWN:
        hidden = len(problems) - MAX_PROBLEMS_SHOWN
        problems = [*problems[:MAX_PROBLEMS_SHOWN], Problem("items", f"and {hidden} more problems")]
    if problems:
        raise RuleViolation(problems)
