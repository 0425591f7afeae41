"""One page of a list (docs/service/contract.md#lists): the page envelope, and the
ordered read behind it.

`read_page` serves every list of the store: rows of one table matching a
filter, sorted, paged, and optionally filtered by a case-insensitive name
substring. The ordered rowids of a query come from its ordering index (a
covering index: no row is read) and are cached for the database's generation,
so a page is a slice of them: the same cost at row 9,901 as at row 1.
"""

from __future__ import annotations

import sqlite3
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from agentform.service.models.pages import Page
from agentform.service.store.database import Conn

T = TypeVar("T")

MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 50


@dataclass(frozen=True)
class PageParams:
    page: int = 1
    page_size: int = DEFAULT_PAGE_SIZE

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.page_size


@dataclass(frozen=True)
class Sorting:
    column: str  # a column name, from a closed set checked by the route
    descending: bool = False


CREATION_ORDER = Sorting("created_at")


@dataclass(frozen=True)
class PageRequest:
    """Which page of a list, in which order, filtered by name or not."""

    paging: PageParams = PageParams()
    sort: Sorting | None = None
    search_name: str | None = None


def read_page(
    conn: Conn,
    table: str,
    where: str,
    args: Sequence[Any],
    request: PageRequest,
    convert: Callable[[sqlite3.Row], T],
) -> Page[T]:
    """One page of `table` rows matching `where`, in a stable order (ties broken by id)."""
    db = conn.database
    params, sort = request.paging, request.sort or CREATION_ORDER
    if request.search_name:
        where += " AND instr(lower(name), lower(?)) > 0"
        args = [*args, request.search_name]
    direction = "DESC" if sort.descending else "ASC"
    order = f"{sort.column} {direction}, id {direction}"
    if sort.column == "name":
        # Case-insensitive like the name search (lower() and NOCASE fold the same
        # letters, ASCII's); names equal but for case keep a stable order.
        order = f"name COLLATE NOCASE {direction}, {order}"
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
    return Page[T](
        items=[convert(r) for r in rows],
        page=params.page,
        pageSize=params.page_size,
        total=len(rowids),
    )
