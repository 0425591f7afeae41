"""Page envelopes and list queries (API.md §4): page/pageSize, sorting, searchName."""

from __future__ import annotations

import sqlite3
import uuid
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from fastapi import Depends, Query
from pydantic import BaseModel

from .auth import Caller, caller
from .db import Database

T = TypeVar("T")

MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 50


class Page(BaseModel, Generic[T]):
    items: list[T]
    page: int
    pageSize: int
    total: int


@dataclass(frozen=True)
class PageParams:
    page: int
    page_size: int

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.page_size


async def page_params(
    page: int = Query(1, ge=1, description="1-based page number"),
    pageSize: int = Query(DEFAULT_PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE),
) -> PageParams:
    return PageParams(page, pageSize)


SortDirection = Literal["asc", "desc"]
# Sort fields name columns directly: the values are closed enums checked by FastAPI.
SortField = Literal["name", "created_at", "updated_at"]
AgentSortField = Literal["name", "created_at"]


@dataclass(frozen=True)
class Sorting:
    column: str
    descending: bool


def sorting(sort_field: str | None, sort_direction: str | None) -> Sorting:
    return Sorting(sort_field or "created_at", sort_direction == "desc")


@dataclass(frozen=True)
class ListQuery:
    """The common query of list operations, organization already checked."""

    who: Caller
    paging: PageParams
    sort: Sorting | None
    search_name: str | None


# The dependencies below are `async` because they do no I/O: FastAPI runs a plain
# `def` dependency in the thread pool, a hop that costs more than the work.
def _query(
    who: Caller,
    organization_id: uuid.UUID | None,
    search_name: str | None,
    paging: PageParams,
    sort: Sorting | None,
) -> ListQuery:
    who.check_organization(organization_id)
    return ListQuery(who, paging, sort, search_name)


async def list_query(
    organizationId: uuid.UUID | None = Query(None),
    searchName: str | None = Query(None),
    sortField: SortField | None = Query(None),
    sortDirection: SortDirection | None = Query(None),
    paging: PageParams = Depends(page_params),
    who: Caller = Depends(caller),
) -> ListQuery:
    return _query(who, organizationId, searchName, paging, sorting(sortField, sortDirection))


async def agent_list_query(
    organizationId: uuid.UUID | None = Query(None),
    searchName: str | None = Query(None),
    sortField: AgentSortField | None = Query(None),
    sortDirection: SortDirection | None = Query(None),
    paging: PageParams = Depends(page_params),
    who: Caller = Depends(caller),
) -> ListQuery:
    return _query(who, organizationId, searchName, paging, sorting(sortField, sortDirection))


async def search_query(
    organizationId: uuid.UUID | None = Query(None),
    searchName: str | None = Query(None),
    paging: PageParams = Depends(page_params),
    who: Caller = Depends(caller),
) -> ListQuery:
    """Lists with no sort parameters (vault templates)."""
    return _query(who, organizationId, searchName, paging, None)


def list_page(
    db: Database,
    conn: sqlite3.Connection,
    table: str,
    where: str,
    args: Sequence[Any],
    query: ListQuery | PageParams,
    convert: Callable[[sqlite3.Row], T],
) -> Page[T]:
    """One page of `table` rows matching `where`, in a stable order.

    The ordered rowids of the query come from the ordering index (a covering
    index: no row is read) and are cached for the database's generation, so a
    page is a slice of them: the same cost at row 9,901 as at row 1.
    """
    params = query.paging if isinstance(query, ListQuery) else query
    sort = (query.sort if isinstance(query, ListQuery) else None) or Sorting("created_at", False)
    search_name = query.search_name if isinstance(query, ListQuery) else None
    if search_name:
        where += " AND instr(lower(name), lower(?)) > 0"
        args = [*args, search_name]
    direction = "DESC" if sort.descending else "ASC"
    order = f"{sort.column} {direction}, id {direction}"
    key = (table, where, tuple(args), order)
    generation = db.snapshot_generation()
    rowids = db.order_cache.get(key, generation) if generation is not None else None
    if rowids is None:
        query_rows = conn.execute(f"SELECT rowid FROM {table} WHERE {where} ORDER BY {order}", args)
        rowids = array("q", (r[0] for r in query_rows))
        # Only a list of several pages is read again soon (its other pages); caching a
        # one-page answer (a pool's members, say) would just evict the lists that are.
        if generation is not None and len(rowids) > params.page_size:
            db.order_cache.put(key, generation, rowids)
    page_ids = rowids[params.offset : params.offset + params.page_size].tolist()
    marks = ",".join("?" * len(page_ids))
    rows = conn.execute(
        f"SELECT * FROM {table} WHERE rowid IN ({marks}) ORDER BY {order}", page_ids
    ).fetchall()
    total = len(rowids)
    return Page[T](
        items=[convert(r) for r in rows],
        page=params.page,
        pageSize=params.page_size,
        total=total,
    )
