"""Page envelopes and list queries (API.md §4): page/pageSize, sorting, searchName."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from fastapi import Query
from pydantic import BaseModel

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


def page_params(
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


def list_page(
    conn: sqlite3.Connection,
    table: str,
    where: str,
    args: Sequence[Any],
    params: PageParams,
    convert: Callable[[sqlite3.Row], T],
    sort: Sorting | None = None,
    search_name: str | None = None,
) -> Page[T]:
    """One page of `table` rows matching `where`, in a stable order.

    The page's rowids are picked from the ordering index alone (the inner
    query), so skipping to a late page reads index entries, not whole rows.
    """
    sort = sort or Sorting("created_at", False)
    if search_name:
        where += " AND instr(lower(name), lower(?)) > 0"
        args = [*args, search_name]
    direction = "DESC" if sort.descending else "ASC"
    order = f"{sort.column} {direction}, id {direction}"
    total = conn.execute(f"SELECT count(*) FROM {table} WHERE {where}", args).fetchone()[0]
    rows = conn.execute(
        f"SELECT * FROM {table} WHERE rowid IN ("
        f"  SELECT rowid FROM {table} WHERE {where} ORDER BY {order} LIMIT ? OFFSET ?"
        f") ORDER BY {order}",
        [*args, params.page_size, params.offset],
    ).fetchall()
    return Page[T](
        items=[convert(r) for r in rows],
        page=params.page,
        pageSize=params.page_size,
        total=total,
    )
