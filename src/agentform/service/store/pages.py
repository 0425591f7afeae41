"""One page of a list (docs/service/contract.md#lists): the page envelope, and the
ordered read behind it.

`read_page` serves every list of the store: rows of one table matching a
filter, sorted, paged, and optionally filtered by a case-insensitive name
substring. The ordered rowids of a query come from its ordering index (a
covering index: no row is read) and are cached for the database's generation,
so a page is a slice of them: the same cost at row 9,901 as at row 1, and one
query (the page's rows by rowid). A first page that holds the whole list is one
query too, whose rows give the order to cache; a first page of a longer one is
that query and the walk of the index.
"""

from __future__ import annotations

import sqlite3
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from agentform.service.models.pages import Page
from agentform.service.store.common import RowModel
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
    query = _Query(conn, table, where, tuple(args), order)
    rows, total = query.window(params)
    return Page[T](
        items=convert.many(rows) if isinstance(convert, RowModel) else [convert(r) for r in rows],
        page=params.page,
        pageSize=params.page_size,
        total=total,
    )


@dataclass(frozen=True)
class _Query:
    """A list query in one read snapshot: its rows, its ordered rowids (cached)."""

    conn: Conn
    table: str
    where: str
    args: tuple[Any, ...]
    order: str

    def window(self, params: PageParams) -> tuple[list[sqlite3.Row], int]:
        """The rows of one page and the count of all, in one query when it can be:
        the order is cached (any list read since the last write), or the first page
        holds the whole list."""
        key = (self.table, self.where, self.args, self.order)
        generation = self.conn.database.snapshot_generation()
        cache = self.conn.database.order_cache
        rowids = cache.get(key, generation) if generation is not None else None
        first: list[sqlite3.Row] | None = None
        known = rowids is not None
        if rowids is None and params.offset == 0:
            first = self._first(params.page_size + 1)
            if len(first) <= params.page_size:  # the whole list: its order is known too
                rowids = array("q", (r[0] for r in first))
        if rowids is None:
            rowids = self._order()
        if generation is not None and not known:
            cache.put(key, generation, rowids)
        if first is not None:  # the first page, read already
            return first[: params.page_size], len(rowids)
        window = rowids[params.offset : params.offset + params.page_size].tolist()
        return self._by_rowid(window), len(rowids)

    def _first(self, limit: int) -> list[sqlite3.Row]:
        sql = f"SELECT rowid, * FROM {self.table} WHERE {self.where} ORDER BY {self.order} LIMIT ?"
        return self.conn.execute(sql, (*self.args, limit)).fetchall()

    def _order(self) -> array[int]:
        # From the ordering index (a covering index): no row is read.
        sql = f"SELECT rowid FROM {self.table} WHERE {self.where} ORDER BY {self.order}"
        return array("q", (r[0] for r in self.conn.execute(sql, self.args)))

    def _by_rowid(self, rowids: list[int]) -> list[sqlite3.Row]:
        if not rowids:
            return []
        marks = ",".join("?" * len(rowids))
        sql = f"SELECT rowid, * FROM {self.table} WHERE rowid IN ({marks})"
        # Put back in the list's order here: cheaper than SQLite sorting them again.
        found = {r[0]: r for r in self.conn.execute(sql, rowids)}
        return [found[rowid] for rowid in rowids]
