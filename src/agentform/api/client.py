"""The Agent Service client: auth header, paging, retries, errors -> ApiError.

Retry rules:
- GET, PUT, PATCH, DELETE and calls marked idempotent (member changes) are
  retried on 429, 5xx and transport errors, with jittered exponential backoff
  that honours Retry-After; attempts and each wait are capped.
- A create (POST) is never retried blindly: only when the request provably never
  reached the server (the connection was not made, or 429: refused unprocessed),
  or when a lookup by name shows the object does not exist; if the lookup finds
  it, the object is adopted as the answer of the create.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from ..errors import ApiError, ReadError

PAGE_SIZE = 100
Lookup = Callable[[], Awaitable[Any]]


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5
    base_delay: float = 0.25
    max_delay: float = 8.0  # cap on one wait, Retry-After included

    def backoff(self, attempt: int) -> float:
        return min(self.max_delay, self.base_delay * 2 ** (attempt - 1)) * random.uniform(0.5, 1)


class ApiClient:
    def __init__(
        self,
        base_url: str,
        api_key: str,
        transport: httpx.AsyncBaseTransport | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        concurrency: int = 8,
    ) -> None:
        self.http = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            headers={"X-Api-Key": api_key, "User-Agent": "agentform"},
            transport=transport,
            timeout=httpx.Timeout(30.0, connect=10.0),
        )
        self.retry = retry or RetryPolicy()
        self.sleep = sleep
        self.limit = asyncio.Semaphore(concurrency)

    async def __aenter__(self) -> ApiClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.http.aclose()

    async def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
        idempotent: bool | None = None,
        lookup: Lookup | None = None,
    ) -> Any:
        """The decoded answer (None for 204); ApiError when it fails for good."""
        safe = (
            method in ("GET", "HEAD", "PUT", "PATCH", "DELETE")
            if idempotent is None
            else idempotent
        )
        may_have_applied = False
        for attempt in range(1, self.retry.attempts + 1):
            last = attempt == self.retry.attempts
            try:
                async with self.limit:
                    response = await self.http.request(method, path, json=json, params=params)
            except httpx.TransportError as exc:
                never_sent = isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout)
                reason = f"cannot reach the service ({type(exc).__name__})"
                if last or not (safe or never_sent or lookup):
                    raise ApiError(method, path, None, reason) from None
                if not never_sent:
                    may_have_applied = True
                    if lookup and not safe and (found := await lookup()) is not None:
                        return found
                await self.sleep(self.retry.backoff(attempt))
                continue
            status = response.status_code
            if status == 429 or status >= 500:
                refused = status == 429  # rejected before any processing
                if not last and (safe or refused or lookup):
                    if not refused:
                        may_have_applied = True
                        if lookup and not safe and (found := await lookup()) is not None:
                            return found
                    await self.sleep(self._wait(response, attempt))
                    continue
            if status == 404 and method == "DELETE" and may_have_applied:
                return None  # an earlier attempt deleted it
            if status >= 400:
                raise ApiError(method, path, status, _message(response))
            return response.json() if response.content else None
        raise AssertionError("unreachable")

    def _wait(self, response: httpx.Response, attempt: int) -> float:
        header = response.headers.get("Retry-After")
        if header:
            try:
                return min(self.retry.max_delay, max(0.0, float(header)))
            except ValueError:
                pass
        return self.retry.backoff(attempt)

    async def list_all(
        self, path: str, params: dict[str, Any] | None = None, identity: str = "id"
    ) -> list[Any]:
        """Every item of a list: page 1, then the other pages concurrently.

        The read is refused (ReadError) unless the items add up to `total` with
        no identity (`id`, or the field that identifies an item of this list, like
        an attachment's `agentId`) twice: a list that changed under the read is not
        planned on.
        """
        query = {**(params or {}), "pageSize": PAGE_SIZE}
        first = await self.request("GET", path, params={**query, "page": 1})
        total = first["total"]
        pages = max(1, math.ceil(total / PAGE_SIZE))
        rest = await asyncio.gather(
            *(self.request("GET", path, params={**query, "page": p}) for p in range(2, pages + 1))
        )
        items = [*first["items"], *(i for page in rest for i in page["items"])]
        ids = [i[identity] for i in items]
        if len(items) != total or len(set(ids)) != len(ids):
            raise ReadError(
                f"GET {path}: the list changed while it was read ({len(items)} items, "
                f"{len(set(ids))} distinct, total {total}); nothing was planned, try again"
            )
        return items


def _message(response: httpx.Response) -> str:
    try:
        body = response.json()
        return str(body.get("message") or response.reason_phrase)
    except ValueError:
        return response.reason_phrase or "error"
