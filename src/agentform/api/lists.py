"""Reading a whole list of the Agent Service: page 1, then the other pages at once,
refused when the list changed under the read; and the deep reads of its items,
each started as its page arrives. The client (api/client.py) extends `ListReads`
with the one request it sends each page by."""

from __future__ import annotations

import asyncio
import math
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from agentform.api.answers import page_of
from agentform.api.together import all_or_none
from agentform.core.errors import ReadError

PAGE_SIZE = 100
T = TypeVar("T")


class ListReads(ABC):
    """The list reads of a client whose `request` sends one request, in its `scope`
    (the organization every list and create names)."""

    scope: dict[str, str]

    @abstractmethod
    async def request(self, method: str, path: str, *, params: dict[str, Any] | None = None) -> Any:
        """The decoded answer of one request (api/client.py: with its retries)."""

    async def list_all(
        self,
        path: str,
        params: dict[str, Any] | None = None,
        identity: str = "id",
        on_page: Callable[[list[Any]], None] | None = None,
    ) -> list[Any]:
        """Every item of a list: page 1, then the other pages concurrently. A bare JSON
        array where a page was expected (the public service's template list) is the
        whole list. `on_page` sees each page's items as it arrives (to start reads
        that need them while the other pages are read).

        The read is refused (ReadError) unless the items add up to `total` with
        no identity (`id`, or the field that identifies an item of this list, like
        an attachment's `agentId`) twice: a list that changed under the read is not
        planned on.
        """
        query = {**self.scope, **(params or {}), "pageSize": PAGE_SIZE}

        async def page(number: int) -> tuple[list[Any], int | None]:
            answer = await self.request("GET", path, params={**query, "page": number})
            items, total = page_of(answer, path, identity)
            if on_page is not None:
                on_page(items)
            return items, total

        items, listed = await page(1)
        if listed is None:  # a bare array: the whole list
            total, pages = len(items), 1
        else:
            total, pages = listed, max(1, math.ceil(listed / PAGE_SIZE))
        if pages > 1:  # (most lists, a set's members, are one page: no gather for them)
            rest = await all_or_none(*(page(p) for p in range(2, pages + 1)))
            items = [*items, *(i for more, _ in rest for i in more)]
        ids = [i[identity] for i in items]
        if len(items) != total or len(set(ids)) != len(ids):
            raise ReadError(
                f"GET {path}: the list changed while it was read ({len(items)} items, "
                f"{len(set(ids))} distinct, total {total}); nothing was planned, try again"
            )
        return items

    async def list_and_read(
        self,
        path: str,
        wanted: Callable[[Any], bool],
        read: Callable[[Any], Awaitable[T]],
    ) -> tuple[list[Any], dict[str, T]]:
        """Every item of a list, and `read(item)` of each `wanted` one (its members,
        say), by id. Each deep read starts as soon as its item's page arrives, so
        the window stays full while the other pages are read."""
        started: dict[str, asyncio.Future[T]] = {}

        def start(items: list[Any]) -> None:
            for item in items:
                # an item listed twice (the list changed) is read once: the read is
                # refused anyway, and a second read would escape the cancel below
                if wanted(item) and item["id"] not in started:
                    started[item["id"]] = asyncio.ensure_future(read(item))

        try:
            items = await self.list_all(path, on_page=start)
            answers = await asyncio.gather(*started.values())
        except BaseException:
            for future in started.values():
                future.cancel()
            await asyncio.gather(*started.values(), return_exceptions=True)
            raise
        return items, dict(zip(started, answers, strict=True))
