"""The Agent Service client: auth header, paging, retries, pacing, errors -> ApiError.

Retry rules:
- GET, PUT, PATCH, DELETE and calls marked idempotent (member changes) are
  retried on 5xx and transport errors, with jittered exponential backoff;
  attempts and each wait are capped.
- A create (POST) is never retried blindly: only when the request provably never
  reached the server (the connection was not made, or 429: refused unprocessed),
  or when a lookup by name shows the object does not exist; if the lookup finds
  it, the object is adopted as the answer of the create. Any call given a
  `lookup` (an action such as a batch's cancel: a read of its object) is sent
  again the same way, only after the lookup shows the earlier attempt did not land.
- A TLS failure is never sent again: it would be the same.
- 429 means "slower", not "failed": every request is retried, and its
  Retry-After (or a backoff) pauses the whole run. Only `throttled_attempts`
  refusals of one request in a row make it fail.
- A Retry-After on a 429 or 503 pauses the whole run whatever becomes of its
  request (a create refused with 503 fails, and the others still wait).

Pacing (one of each per client, so per run): `concurrency.py` decides how many
requests are in flight, `ratelimit.py` when the next may start; `transport.py`
sends it. Reading a whole list, page by page, is `lists.py`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx

from agentform.api.answers import decoded, error_message, error_text
from agentform.api.clock import Clock, SkippedWaits, SystemClock
from agentform.api.concurrency import DEFAULT_PARALLELISM, AdaptiveConcurrency
from agentform.api.endpoint_url import shown_endpoint
from agentform.api.lists import ListReads
from agentform.api.notices import Notices
from agentform.api.ratelimit import RateLimiter
from agentform.api.retries import AGAIN, Attempts, Lookup, RetryPolicy
from agentform.api.transport import Sender
from agentform.api.unreached import lasting, unreached_reason
from agentform.core.sensitive import Sensitive, reveal

T = TypeVar("T")


class ApiClient(ListReads):
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
        timeout: float | None = None,
        notices: Notices | None = None,
        shown: str | None = None,
    ) -> None:
        """`shown`: the URL messages name the service by (the endpoint as configured,
        credentials removed), when `base_url` is another (agentform's own operations,
        /agentform/v1 beside the API); else `base_url`.
        `concurrency` is the ceiling of requests in flight; `rate_limit` requests per
        second, when the service's limit is known; `timeout` the seconds one request
        may take (transport.py's TIMEOUT when None). `sleep` (tests): waits are handed
        to it instead of slept, and the client's time moves on by them. `notices` hears
        of every retry and every pause the service asks for."""
        self.clock: Clock = clock or (SkippedWaits(sleep) if sleep else SystemClock())
        self.sender = Sender(base_url, api_key, transport, concurrency, timeout)
        self.notices = notices or Notices()
        self.retry = retry or RetryPolicy()
        self.concurrency = AdaptiveConcurrency(concurrency, self.clock)
        self.limiter = RateLimiter(self.clock, rate_limit)
        self.sent = 0  # requests sent, retries included
        self.shown_url = shown_endpoint(shown or base_url)
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
        # (the slot and the pace are most often there at once: no coroutine for them)
        ticket = self.concurrency.take() or await self.concurrency.acquire(retry=retry)
        try:
            if (delay := self.limiter.reserve()) > 0:
                await self.limiter.wait(delay)
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
                self._pause(method, path, response, self.retry.wait(response, 1))
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
        call = Attempts(method, path, safe, lookup)
        while True:
            try:
                response, handed_over = await self._send(
                    method, path, json, params, call.again, sending
                )
            except httpx.DecodingError:
                # a body that is not what its Content-Encoding says (a proxy's doing):
                # it would be the same again
                reason = "the answer could not be decoded (its Content-Encoding is wrong)"
                raise call.failed(None, reason) from None
            except httpx.TransportError as exc:
                outcome = await self._unreached(call, exc)
            else:
                outcome = await self._answered(call, response, handed_over)
            if outcome is not AGAIN:
                return outcome

    async def _unreached(self, call: Attempts, exc: httpx.TransportError) -> Any:
        """After a transport error: AGAIN, what an earlier attempt made, or ApiError."""
        call.failures += 1
        last = call.failures >= self.retry.attempts
        never_sent = isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout)
        timeout = self.sender.timeout.connect if never_sent else self.sender.timeout.read
        cause = unreached_reason(exc, httpx.URL(self.shown_url).netloc.decode(), timeout)
        if last or lasting(exc) or not (call.safe or never_sent or call.lookup):
            raise call.failed(
                None, f"cannot reach the service at {self.shown_url} ({cause})"
            ) from None
        if not never_sent:
            call.may_have_applied = True
            if (found := await call.found_earlier()) is not None:
                return found
        wait = self.retry.backoff(call.failures)
        self.notices.retrying(f"{call.method} {call.path}", cause, wait)
        await self.clock.sleep(wait)
        return AGAIN

    async def _answered(self, call: Attempts, response: httpx.Response, handed_over: bool) -> Any:
        """After an answer: AGAIN, the decoded answer, or ApiError."""
        status = response.status_code
        if status == 429:  # refused before any processing: always safe to send again
            if self._throttled_again(call, response):
                return AGAIN
        elif status >= 500 and (outcome := await self._after_failure(call, response)) is not None:
            return outcome
        if status == 404 and call.method == "DELETE" and call.may_have_applied:
            return None  # an earlier attempt deleted it
        if status >= 400:
            message = error_text(response, self.shown_url)
            raise call.failed(status, message)
        if handed_over:
            await _successor_first()  # after any pause this answer asks for
        return decoded(response, call.method)

    def _throttled_again(self, call: Attempts, response: httpx.Response) -> bool:
        """Whether a 429 is sent again (fewer than `throttled_attempts` in a row)."""
        call.throttled += 1
        if call.throttled >= self.retry.throttled_attempts:
            return False
        if "Retry-After" not in response.headers:  # (else the whole run is paused already)
            self._pause(call.method, call.path, response, self.retry.backoff(call.throttled))
        return True

    def _pause(self, method: str, path: str, response: httpx.Response, wait: float) -> None:
        """The whole run waits `wait` seconds, as `response` asked; said once it does."""
        pauses = self.limiter.pauses
        self.limiter.pause(wait)
        if self.limiter.pauses > pauses:
            why = f"{response.status_code} {error_message(response)}"
            self.notices.pausing(f"{method} {path}", why, wait)

    async def _after_failure(self, call: Attempts, response: httpx.Response) -> Any:
        """After a 5xx: AGAIN, what an earlier attempt made, or None when the call
        is not sent again (its error is the answer's)."""
        call.failures += 1
        call.throttled = 0
        if call.failures >= self.retry.attempts or not (call.safe or call.lookup):
            return None
        call.may_have_applied = True
        if (found := await call.found_earlier()) is not None:
            return found
        wait = None  # (a 503's Retry-After paused the whole run already)
        if response.status_code != 503 or "Retry-After" not in response.headers:
            wait = self.retry.wait(response, call.failures)
        why = f"{response.status_code} {error_message(response)}"
        self.notices.retrying(f"{call.method} {call.path}", why, wait or 0.0)
        if wait is not None:
            await self.clock.sleep(wait)
        return AGAIN

    def scope_to(self, organization_id: str) -> None:
        """Name this organization in every list and create (a key reaching several)."""
        self.scope = {"organizationId": organization_id}

    def scoped(self, body: Any) -> Any:
        """A create's body, naming the run's organization when the client is scoped."""
        if self.scope and isinstance(body, dict) and "organizationId" not in body:
            return {**body, **self.scope}
        return body


async def _successor_first() -> None:
    """Lets the request just handed this slot go out before this answer is worked on.

    Answers that arrive together are handled in one turn of the event loop, and
    a woken waiter runs only in the next: without this, every successor of a
    batch of answers would start after all of them were decoded and planned on,
    at once, so they would come back at once too, and each round trip would
    cost the latency plus the client's work on the whole batch. Two turns: in
    the first the woken waiters start (this task only yields again), in the
    second the answers are worked on while their successors are in flight.
    The first turn only has to pass: a callback, not this task's whole chain of
    coroutines (request, page, list...) resumed once more for nothing."""
    loop = asyncio.get_running_loop()
    passed = loop.create_future()
    loop.call_soon(passed.set_result, None)  # runs in the next turn, beside the waiters
    await passed  # (and this task in the one after)
