"""How many requests a run keeps in flight: adaptive (AIMD, as TCP does).

The window starts at `INITIAL_WINDOW` (10) and grows while it is what holds
requests back (one went out into a full window, or was waiting when an answer
freed its slot), answers come back as fast as the fastest recent ones (within
`tolerance` times) and the service says nothing: by one per answer until the
first back-off (doubling every round trip, TCP's slow start), then by one per
window of answers. A 429 or 503 halves it, once per
window (the answers to requests sent before a back-off are the same signal, not
new ones). It stays between 1 and `ceiling` (`--parallelism`).

Callers `acquire()` a slot (retries go to the front of the line), send, then
report `succeeded(ticket, latency)` or `overloaded(ticket)`, and `release()`.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass

from agentform.api import DEFAULT_PARALLELISM as DEFAULT_PARALLELISM  # read from here too
from agentform.api.clock import Clock
from agentform.api.waiting import wait_in_line

INITIAL_WINDOW = 10
"""Requests in flight before any answer: what TCP's initial window has been since
RFC 6928 (10 segments) and Terraform's default -parallelism (10) send to a
provider's API at once. A start at 4 cost a plan of 1,000 objects about 3% of its
time in two round trips of a half-empty window (docs/performance.md), while a
service that cannot take 10 says so with a 429 or 503, which halves the window at
the first answer as it did before."""


@dataclass(frozen=True)
class Ticket:
    """A slot held: which window it was granted in, and whether that window was full."""

    epoch: int
    window_full: bool


class LatencyBaseline:
    """The fastest answer of the recent past: the minimum over the last two spans of
    `span` answers, so it follows a network that got slower."""

    def __init__(self, span: int = 200) -> None:
        self.span = span
        self.previous = float("inf")
        self.current = float("inf")
        self.count = 0

    def add(self, latency: float) -> None:
        self.current = min(self.current, latency)
        self.count += 1
        if self.count >= self.span:
            self.previous, self.current, self.count = self.current, float("inf"), 0

    @property
    def value(self) -> float:
        return min(self.previous, self.current)


class AdaptiveConcurrency:
    def __init__(
        self,
        ceiling: int,
        clock: Clock,
        initial: int = INITIAL_WINDOW,
        tolerance: float = 2.0,
        decrease: float = 0.5,
    ) -> None:
        self.ceiling = max(1, ceiling)
        self.clock = clock
        self.limit = float(min(self.ceiling, max(1, initial)))
        self.tolerance = tolerance
        self.decrease = decrease
        self.slow_start = True
        self.epoch = 0  # back-offs so far
        self.in_flight = 0
        self.baseline = LatencyBaseline()
        self.waiters: deque[asyncio.Future[None]] = deque()
        # what the run reached, for reports and benchmarks
        self.peak_limit = self.limit
        self.peak_in_flight = 0
        self.busy_integral = 0.0  # in-flight requests x seconds
        self.started = clock.now()
        self.changed = self.started

    # -- slots ---------------------------------------------------------------
    @property
    def limit(self) -> float:
        return self._limit

    @limit.setter
    def limit(self, value: float) -> None:
        # the window is read several times per request, the limit set once per answer
        self._limit = value
        self.window = max(1, int(value))

    def take(self) -> Ticket | None:
        """A slot at once when one is free and no one waits for it; else None (then
        `acquire`). A request's usual case, without a coroutine for it."""
        if not self.waiters and self.in_flight < self.window:
            self._admit()
            return Ticket(self.epoch, self.in_flight >= self.window)
        return None

    async def acquire(self, retry: bool = False) -> Ticket:
        """A slot; a retry waits at the front of the line."""
        if (ticket := self.take()) is not None:
            return ticket
        # a slot handed over and not used is released; a retry may go first into a
        # free slot (one only cancelled waiters stood in front of)
        await wait_in_line(self.waiters, lambda _: self.release(), front=retry, joined=self._wake)
        return Ticket(self.epoch, self.in_flight >= self.window)

    def _admit(self) -> None:
        self._account()
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def release(self) -> bool:
        """Frees a slot; True when a waiter was handed one."""
        self._account()
        self.in_flight -= 1
        return self._wake()

    def _wake(self) -> bool:
        woken = False
        while self.waiters and self.in_flight < self.window:
            waiter = self.waiters.popleft()
            if not waiter.done():
                self._admit()
                waiter.set_result(None)
                woken = True
        return woken

    def _account(self) -> None:
        now = self.clock.now()
        self.busy_integral += self.in_flight * (now - self.changed)
        self.changed = now

    # -- signals -------------------------------------------------------------
    def succeeded(self, ticket: Ticket, latency: float, handed_over: bool = False) -> None:
        """An answer in `latency` seconds; `handed_over`: its slot went straight to a
        request that was waiting for one."""
        self.baseline.add(latency)
        if ticket.epoch != self.epoch:
            return  # sent before a back-off: no evidence about a larger window
        if not (ticket.window_full or handed_over):
            return  # the window was not what held requests back
        if latency > self.tolerance * self.baseline.value:
            return  # answers are slowing: the service is queueing, hold
        step = 1.0 if self.slow_start else 1.0 / self.limit
        self.limit = min(float(self.ceiling), self.limit + step)
        self.peak_limit = max(self.peak_limit, self.limit)
        self._wake()

    def overloaded(self, ticket: Ticket) -> None:
        """The service refused (429) or was unavailable (503): back off once per window."""
        if ticket.epoch != self.epoch:
            return
        self.epoch += 1
        self.slow_start = False
        self.limit = max(1.0, self.limit * self.decrease)

    def mean_in_flight(self) -> float:
        self._account()
        elapsed = self.changed - self.started
        return self.busy_integral / elapsed if elapsed > 0 else 0.0
