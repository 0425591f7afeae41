"""One rate limiter for every request of a run: a token bucket, and the run's pause.

- With a known rate (`--rate-limit N/s`, `AGENTFORM_RATE_LIMIT`), requests are
  spaced to that rate, reads and writes alike. Each caller reserves the next free
  slot (it may wait in line behind others), so callers are served in order and the
  rate holds however many wait.
- Whatever the rate, a `Retry-After` from the service pauses the whole run: no
  request of the run is sent before the pause ends, not only the refused one.
  Those already in line keep their order and the rate after it: each is given a
  new slot, one interval apart, from the end of the pause (the service's bucket
  is empty then); let go all at once, they would meet it in a burst.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentform.api.clock import Clock
from agentform.core.errors import AgentformError

RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:/\s*(s|sec|second|m|min|minute))?\s*$")


def parse_rate(text: str) -> float:
    """Requests per second from "20", "20/s" or "600/min"."""
    match = RATE.match(text)
    if not match or float(match[1]) <= 0:
        raise AgentformError(
            f"rate limit {text!r}: expected requests per second as N or N/s (or N/min), N > 0"
        )
    per_minute = (match[2] or "s").startswith("m")
    return float(match[1]) / (60 if per_minute else 1)


@dataclass
class _Slot:
    """When a request waiting in line may be sent (moved later by a pause)."""

    at: float


class RateLimiter:
    """A token bucket of `rate` per second (None: unlimited) holding at most `burst`."""

    def __init__(self, clock: Clock, rate: float | None = None, burst: float = 1.0) -> None:
        self.clock = clock
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.updated = clock.now()
        self.paused_until = float("-inf")
        self.pauses = 0  # how many times the service asked the run to wait
        self.waiting: list[_Slot] = []  # the requests in line, in order

    def reserve(self) -> float:
        """Takes the next slot: the seconds to wait before sending in it."""
        now = self.clock.now()
        start = max(now, self.paused_until)
        if self.rate is None:
            return start - now
        start = max(start, self.updated)
        self.tokens = min(self.burst, self.tokens + (start - self.updated) * self.rate)
        self.updated = start
        self.tokens -= 1
        debt = -self.tokens / self.rate if self.tokens < 0 else 0.0
        return start - now + debt

    async def acquire(self) -> None:
        if (delay := self.reserve()) > 0:
            await self.wait(delay)

    async def wait(self, delay: float) -> None:
        """Waits out a reserved slot `delay` seconds ahead (and any pause begun meanwhile)."""
        slot = _Slot(self.clock.now() + delay)
        self.waiting.append(slot)
        try:
            # a pause begun while waiting moves the slot (or, with no rate, holds it)
            while (delay := max(slot.at, self.paused_until) - self.clock.now()) > 0:
                await self.clock.sleep(delay)
        finally:
            self.waiting.remove(slot)

    def pause(self, seconds: float) -> None:
        """The service said to wait: nothing more is sent for `seconds` from now."""
        until = self.clock.now() + seconds
        if until <= self.paused_until:
            return
        self.pauses += 1
        self.paused_until = until
        if self.rate is None:
            return
        # No saved-up burst after a refusal: the service's bucket was empty. Those in
        # line go first, one interval apart; the next reservation comes after them.
        self.updated, self.tokens = until, 0.0
        for slot in self.waiting:
            self.updated += 1 / self.rate
            slot.at = self.updated
