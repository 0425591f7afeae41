"""The query parameters of lists (docs/service/contract.md#lists) as FastAPI dependencies.

They turn `page`, `pageSize`, `sortField`, `sortDirection`, `searchName` and
`organizationId` into a `ListQuery`: the caller and the store's PageRequest.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from fastapi import Query, Request

from agentform.rules.values import NAME_MAX_LENGTH
from agentform.service.errors import bad_request
from agentform.service.http.auth import Caller, current_caller
from agentform.service.models.pages import Page
from agentform.service.store.database import Database, iso
from agentform.service.store.pages import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    PageParams,
    PageRequest,
    Sorting,
)

__all__ = ["ListQuery", "Page", "PageParams", "PageRequest", "page_params", "time_param"]

SortDirection = Literal["asc", "desc"]
# Sort fields name columns directly: the values are closed enums checked by FastAPI.
SortField = Literal["name", "created_at", "updated_at"]
AgentSortField = Literal["name", "created_at"]
# A name filter longer than any name could match nothing: bounded like the names.
SearchName = Query(None, max_length=NAME_MAX_LENGTH)


PAGE = Query(1, ge=1, description="1-based page number")
PAGE_SIZE = Query(DEFAULT_PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE)


async def page_params(page: int = PAGE, pageSize: int = PAGE_SIZE) -> PageParams:
    return PageParams(page, pageSize)


EXCLUSIVE_TIME: dict[str, Any] = {
    "description": "An RFC 3339 time with its zone (2026-01-31T09:00:00Z), exclusive.",
    "json_schema_extra": {"format": "date-time"},
}
"""A time filter's OpenAPI description: what `time_param` reads."""


def time_param(field: str, value: str | None) -> str | None:
    """A time filter (`since`, `createdAfter`): ISO 8601 with its zone, as stored
    (UTC, sortable); 400 naming `field` otherwise."""
    if value is None:
        return None
    try:  # RFC 3339 allows a lower-case t and z
        moment = datetime.fromisoformat(value.upper())
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        problem = "an ISO 8601 time with a zone, such as 2026-01-31T09:00:00Z"
        raise bad_request([(field, problem)])
    return iso(moment)


def sorting(sort_field: str | None, sort_direction: str | None) -> Sorting:
    return Sorting(sort_field or "created_at", sort_direction == "desc")


@dataclass(frozen=True)
class ListQuery:
    """The common query of list operations, organization already checked, and the
    database to read it from."""

    who: Caller
    request: PageRequest
    db: Database


# The dependencies below are `async` because they do no I/O: FastAPI runs a plain
# `def` dependency in the thread pool, a hop that costs more than the work. They
# take `page` and `pageSize`, the caller and the database themselves, not through
# `page_params`, `caller` and `database`: each dependency is resolved on every
# request (about as much as two parameters).
def _query(
    http: Request,
    organization_id: uuid.UUID | None,
    search_name: str | None,
    paging: PageParams,
    sort: Sorting | None,
) -> ListQuery:
    who = current_caller(http)
    who.check_organization(organization_id)
    db: Database = http.app.state.db
    return ListQuery(who, PageRequest(paging, sort, search_name), db)


async def list_query(
    http: Request,
    organizationId: uuid.UUID | None = Query(None),
    searchName: str | None = SearchName,
    sortField: SortField | None = Query(None),
    sortDirection: SortDirection | None = Query(None),
    page: int = PAGE,
    pageSize: int = PAGE_SIZE,
) -> ListQuery:
    paging, sort = PageParams(page, pageSize), sorting(sortField, sortDirection)
    return _query(http, organizationId, searchName, paging, sort)


async def agent_list_query(
    http: Request,
    organizationId: uuid.UUID | None = Query(None),
    searchName: str | None = SearchName,
    sortField: AgentSortField | None = Query(None),
    sortDirection: SortDirection | None = Query(None),
    page: int = PAGE,
    pageSize: int = PAGE_SIZE,
) -> ListQuery:
    paging, sort = PageParams(page, pageSize), sorting(sortField, sortDirection)
    return _query(http, organizationId, searchName, paging, sort)


async def search_query(
    http: Request,
    organizationId: uuid.UUID | None = Query(None),
    searchName: str | None = SearchName,
    page: int = PAGE,
    pageSize: int = PAGE_SIZE,
) -> ListQuery:
    """Lists with no sort parameters (vault templates)."""
    return _query(http, organizationId, searchName, PageParams(page, pageSize), None)
