"""When the client sends a request again: the run's retry policy, and the account
one request keeps of its attempts (api/client.py says the rules they follow)."""

from __future__ import annotations

import email.utils
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from agentform.api.clock import wall_now
from agentform.core.errors import ApiError

Lookup = Callable[[], Awaitable[Any]]

AGAIN: Any = object()
"""What a step of a request's loop answers when the request is to be sent again."""


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5
    base_delay: float = 0.25
    max_delay: float = 8.0  # cap on one wait, Retry-After included
    throttled_attempts: int = 20  # 429s in a row one request may meet

    def backoff(self, attempt: int) -> float:
        return min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1)) * random.uniform(0.5, 1)

    def wait(self, response: httpx.Response, attempt: int) -> float:
        """Retry-After (seconds, or an HTTP date), capped; else the backoff."""
        header = response.headers.get("Retry-After")
        seconds = retry_after(header) if header else None
        if seconds is None:
            return self.backoff(attempt)
        return min(self.max_delay, max(0.0, seconds))


@dataclass
class Attempts:
    """One request's attempts so far, and what they allow."""

    method: str
    path: str
    safe: bool  # sending it twice does what sending it once does
    lookup: Lookup | None  # a create's: finds what an earlier attempt made
    failures: int = 0
    throttled: int = 0  # 429s in a row
    may_have_applied: bool = False  # an earlier attempt may have been carried out

    @property
    def again(self) -> bool:
        """Whether the next attempt is a retry (it waits as retries do for a slot)."""
        return self.failures + self.throttled > 0

    def failed(self, status: int | None, message: str) -> ApiError:
        return ApiError(self.method, self.path, status, message, retried=self.may_have_applied)

    async def found_earlier(self) -> Any:
        """What an earlier attempt of a create made, found by its lookup, or None; a
        safe call needs no lookup: it is sent again."""
        if self.lookup and not self.safe:
            return await self.lookup()
        return None


def retry_after(header: str) -> float | None:
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
    return (when - wall_now()).total_seconds()
