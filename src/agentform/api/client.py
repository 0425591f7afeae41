"""The Agent Service client: auth header, paging, retries, pacing, errors -> ApiError.

Retry rules:
- GET, PUT, PATCH, DELETE and calls marked idempotent (member changes) are
  retried on 5xx and transport errors, with jittered exponential backoff;
  attempts and each wait are capped.
- A create (POST) is never retried blindly: only when the request provably never
  reached the server (the connection was not made, or 429: refused unprocessed),
  or when a lookup by name shows the object does not exist; if the lookup finds
  it, the object is adopted as the answer of the create.
- 429 means "slower", not "failed": every request is retried, and its
  Retry-After (or a backoff) pauses the whole run. Only `throttled_attempts`
  refusals of one request in a row make it fail.
- A Retry-After on a 429 or 503 pauses the whole run whatever becomes of its
  request (a create refused with 503 fails, and the others still wait).

Pacing (one of each per client, so per run): `concurrency.py` decides how many
requests are in flight, `ratelimit.py` when the next may start; `transport.py`
sends it.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

import httpx

from agentform.api.answers import base_path_hint, decoded, page_of
from agentform.api.clock import Clock, SkippedWaits, SystemClock
from agentform.api.concurrency import DEFAULT_PARALLELISM, AdaptiveConcurrency
from agentform.api.endpoint_url import shown_endpoint
from agentform.api.ratelimit import RateLimiter
from agentform.api.together import all_or_none
from agentform.api.transport import Sender
from agentform.core.errors import ApiError, ReadError
from agentform.core.sensitive import Sensitive, reveal

PAGE_SIZE = 100
Lookup = Callable[[], Awaitable[Any]]
T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5
    base_delay: float = 0.25
    max_delay: float = 8.0  # cap on one wait, Retry-After included
    throttled_attempts: int = 20  # 429s in a row one request may meet

    def backoff(self, attempt: int) -> float:
        return min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1)) * random.uniform(0.5, 1)


class ApiClient:
    def __init__(
        self,
        base_url: str,
        api_key: str | Sensitive,
        transport: httpx.AsyncBaseTransport | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        concurrency: int = DEFAULT_PARALLELISM,
        rate_limit: float | None = None,
        clock: Clock | None = None,
    ) -> None:
        """`concurrency` is the ceiling of requests in flight; `rate_limit` requests per
        second, when the service's limit is known. `sleep` (tests): waits are handed to
        it instead of slept, and the client's time moves on by them."""
        self.clock: Clock = clock or (SkippedWaits(sleep) if sleep else SystemClock())
        self.sender = Sender(base_url, api_key, transport, concurrency)
        self.retry = retry or RetryPolicy()
        self.concurrency = AdaptiveConcurrency(concurrency, self.clock)
        self.limiter = RateLimiter(self.clock, rate_limit)
        self.sent = 0  # requests sent, retries included
        self.shown_url = shown_endpoint(base_url)
        self.scope: dict[str, str] = {}

    async def __aenter__(self) -> ApiClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.sender.aclose()

    async def _send(
        self,
        method: str,
        path: str,
        json: Any,
        params: dict[str, Any] | None,
        retry: bool,
        sending: Callable[[], None] | None = None,
    ) -> tuple[httpx.Response, bool]:
        """One attempt, in a slot and at the pace of the run; its answer paces the next.
        Also says whether the slot went straight to a waiting request."""
        ticket = await self.concurrency.acquire(retry=retry)
        try:
            await self.limiter.acquire()
            if sending is not None:
                sending()  # no await between this and the send: it is going out
            started = self.clock.now()
            self.sent += 1
            response = await self.sender.send(method, path, json, params)
            latency = self.clock.now() - started
        finally:
            handed_over = self.concurrency.release()
        if response.status_code in (429, 503):
            self.concurrency.overloaded(ticket)
            if "Retry-After" in response.headers:
                # the service said when it can take more: the whole run waits, whether
                # or not this request is sent again (a create after a 503 is not)
                self.limiter.pause(self._wait(response, 1))
        elif response.status_code < 500:
            self.concurrency.succeeded(ticket, latency, handed_over)
        return response, handed_over

    async def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
        idempotent: bool | None = None,
        lookup: Lookup | None = None,
        sending: Callable[[], None] | None = None,
    ) -> Any:
        """The decoded answer (None for 204); ApiError when it fails for good.

        `lookup` is given for a create: it finds what an earlier attempt made.
        `sending` is called as each attempt goes out, after its wait for a slot and
        the rate (an interrupted apply leaves a change whose request never went out)."""
        if lookup is not None:
            json = self.scoped(json)
        json, params = reveal(json), reveal(params)  # sensitive values leave only here
        safe = (
            method in ("GET", "HEAD", "PUT", "PATCH", "DELETE")
            if idempotent is None
            else idempotent
        )
        may_have_applied = False
        attempt = throttled = 0  # failures, and 429s in a row
        while True:
            try:
                response, handed_over = await self._send(
                    method, path, json, params, attempt + throttled > 0, sending
                )
            except httpx.DecodingError:
                # a body that is not what its Content-Encoding says (a proxy's doing):
                # it would be the same again
                reason = "the answer could not be decoded (its Content-Encoding is wrong)"
                raise ApiError(method, path, None, reason, retried=may_have_applied) from None
            except httpx.TransportError as exc:
                attempt += 1
                last = attempt >= self.retry.attempts
                never_sent = isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout)
                reason = f"cannot reach the service at {self.shown_url} ({type(exc).__name__})"
                if last or not (safe or never_sent or lookup):
                    raise ApiError(method, path, None, reason, retried=may_have_applied) from None
                if not never_sent:
                    may_have_applied = True
                    if lookup and not safe and (found := await lookup()) is not None:
                        return found
                await self.clock.sleep(self.retry.backoff(attempt))
                continue
            status = response.status_code
            if status == 429:  # refused before any processing: always safe to send again
                throttled += 1
                if throttled < self.retry.throttled_attempts:
                    if "Retry-After" not in response.headers:  # (else paused already)
                        self.limiter.pause(self.retry.backoff(throttled))
                    continue
            elif status >= 500:
                attempt += 1
                throttled = 0
                if attempt < self.retry.attempts and (safe or lookup):
                    may_have_applied = True
                    if lookup and not safe and (found := await lookup()) is not None:
                        return found
                    if status != 503 or "Retry-After" not in response.headers:
                        await self.clock.sleep(self._wait(response, attempt))
                    continue  # (a 503's Retry-After paused the whole run already)
            if status == 404 and method == "DELETE" and may_have_applied:
                return None  # an earlier attempt deleted it
            if status >= 400:
                message = _message(response) + base_path_hint(self.sender.base_url, status)
                raise ApiError(method, path, status, message, retried=may_have_applied)
            if handed_over:
                await _successor_first()  # after any pause this answer asks for
            return decoded(response, method)

    def _wait(self, response: httpx.Response, attempt: int) -> float:
        """Retry-After (seconds, or an HTTP date), capped; else the backoff."""
        header = response.headers.get("Retry-After")
        seconds = _retry_after(header) if header else None
        if seconds is None:
            return self.retry.backoff(attempt)
        return min(self.retry.max_delay, max(0.0, seconds))

    def scope_to(self, organization_id: str) -> None:
        """Name this organization in every list and create (a key reaching several)."""
        self.scope = {"organizationId": organization_id}

    def scoped(self, body: Any) -> Any:
        """A create's body, naming the run's organization when the client is scoped."""
        if self.scope and isinstance(body, dict) and "organizationId" not in body:
            return {**body, **self.scope}
        return body

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


async def _successor_first() -> None:
    """Lets the request just handed this slot go out before this answer is worked on.

    Answers that arrive together are handled in one turn of the event loop, and
    a woken waiter runs only in the next: without this, every successor of a
    batch of answers would start after all of them were decoded and planned on,
    at once, so they would come back at once too, and each round trip would
    cost the latency plus the client's work on the whole batch. Two turns: in
    the first the woken waiters start (this task only yields again), in the
    second the answers are worked on while their successors are in flight."""
    await asyncio.sleep(0)
    await asyncio.sleep(0)


def _retry_after(header: str) -> float | None:
    """The seconds a Retry-After asks for: a number, or an HTTP date (from the wall
    clock: the date is the service's); None when it is neither."""
    try:
        return float(header)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return (when - datetime.now(UTC)).total_seconds()


def _message(response: httpx.Response) -> str:
    """The error's `message`, or the status's reason (a body that is not JSON, or
    JSON of another shape: a gateway's own error page)."""
    try:
        body = response.json()
    except ValueError:
        body = None
    message = body.get("message") if isinstance(body, dict) else None
    return str(message or response.reason_phrase or "error")
