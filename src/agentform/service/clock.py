"""The clock all time-driven work runs on.

`WallClock` is real time: its `drive` loop sleeps until the next job falls due
(or until new work is scheduled) and runs what is due. `ManualClock` stands
still until a test calls `await clock.advance(seconds)`, which moves time
forward job by job and runs everything that falls due in the window, in due
order (including jobs scheduled by those jobs, when they fall due within it),
with no real sleeping; `advance(0)` runs what is due now. It does not stop for
upkeep (runtime/handlers.py): an upkeep job due on the way runs at the next
instant it stops at (another job's, or the move's end), so a move costs what
falls due on the way, never the simulated time (a year of hourly looks was
8,785 stops).

This module is the only place the service reads the wall clock (`wall_now`,
`WallClock.seconds`); everything else asks the injected clock, so a test's
`ManualClock` governs it too (tests/service/test_layers.py checks it).

`clock.sleep(seconds)` is for work that waits on the clock inside a job (a
timeout racing an HTTP call, say). On the manual clock it ends when `advance`
moves time past it. Because a job's I/O is real, `advance` waits for in-flight
I/O to finish before moving time on; only when that I/O is still running after
`settle` real seconds while something sleeps on the clock does it treat the job
as waiting on the clock and move time to the next sleeper (as trio's
MockClock auto-jumps when every task is blocked).
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime, timedelta
from typing import Protocol

log = logging.getLogger("agentform.service.runtime")

MANUAL_START = datetime(2025, 1, 1, tzinfo=UTC)


def wall_now() -> datetime:
    """Real time, timezone-aware UTC: the wall clock's `now`, and the time of what
    is written with no clock at hand (a database opened by a tool, a migration)."""
    return datetime.now(UTC)


class Driven(Protocol):
    """What a clock drives: the runtime's runner (runtime/runner.py), known here only
    by what the clocks ask of it, so the clock sits below the runtime."""

    stopping: asyncio.Event
    wake: asyncio.Event
    looked_at: datetime

    @property
    def io_tasks(self) -> list[asyncio.Task[None]]: ...

    async def run_due(self) -> int: ...

    async def next_due_after(self, moment: datetime) -> datetime | None: ...

    async def next_stop_after(self, moment: datetime) -> datetime | None:
        """`next_due_after` but for upkeep, which a manual clock does not stop for."""


class Clock(ABC):
    @abstractmethod
    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""

    @abstractmethod
    def seconds(self) -> float:
        """Seconds on a clock that never goes back, from an arbitrary start: for
        measuring intervals (a rate limit's refill), not for timestamps."""

    @abstractmethod
    async def sleep(self, seconds: float) -> None:
        """Returns once `seconds` have passed on this clock."""

    @abstractmethod
    def deadline(self, seconds: float) -> AbstractAsyncContextManager[object]:
        """`async with clock.deadline(s):` the block is cancelled, and TimeoutError
        raised, once `s` seconds have passed on this clock (like asyncio.timeout)."""

    @abstractmethod
    async def drive(self, runner: Driven) -> None:
        """Runs the runner's due work as time passes, until cancelled."""


class WallClock(Clock):
    def now(self) -> datetime:
        return wall_now()

    def seconds(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))

    def deadline(self, seconds: float) -> AbstractAsyncContextManager[object]:
        return asyncio.timeout(max(0.0, seconds))

    async def drive(self, runner: Driven) -> None:
        while not runner.stopping.is_set():
            runner.wake.clear()
            try:
                await runner.run_due()
                # After the moment run_due looked, not after now: a job falling due in
                # between was not run and would not be waited for (issue 20).
                upcoming = await runner.next_due_after(runner.looked_at)
            except Exception:  # the database was busy, say: try again shortly
                log.exception("the runner could not read its jobs; retrying in 1 s")
                upcoming = self.now() + timedelta(seconds=1)
            delay = None if upcoming is None else (upcoming - self.now()).total_seconds()
            # asyncio.timeout, not wait_for: in Python 3.11 wait_for returns the result
            # when the wake-up and a cancellation arrive together, losing the cancel
            # (then the next wait, with nothing due, never ends: stop hung).
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(None if delay is None else max(0, delay)):
                    await runner.wake.wait()


class ManualClock(Clock):
    """Time moves only when a test says so."""

    def __init__(self, start: datetime = MANUAL_START, settle: float = 0.5) -> None:
        if start.tzinfo is None:
            raise ValueError("start must be timezone-aware")
        self._now = start.astimezone(UTC)
        self.published: Callable[[datetime], Awaitable[None]] | None = None
        """Told each instant the clock moves to, before what falls due then runs: the
        service stores it for its delivery workers (FollowerClock)."""
        self.settle = settle  # real seconds of unfinished I/O after which a sleeper may fire
        self._runners: list[Driven] = []
        self._sleepers: list[tuple[datetime, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def now(self) -> datetime:
        return self._now

    def seconds(self) -> float:
        return (self._now - MANUAL_START).total_seconds()

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        deadline = self._now + timedelta(seconds=seconds)
        heapq.heappush(self._sleepers, (deadline, next(self._order), future))
        await future

    @contextlib.asynccontextmanager
    async def deadline(self, seconds: float) -> AsyncIterator[None]:
        loop = asyncio.get_running_loop()
        async with asyncio.timeout(None) as timeout:
            inside = True
            reached: asyncio.Future[None] = loop.create_future()

            def expire(_: asyncio.Future[None]) -> None:
                if inside and not reached.cancelled():
                    timeout.reschedule(loop.time())  # cancels the block at once

            reached.add_done_callback(expire)
            moment = self._now + timedelta(seconds=max(0.0, seconds))
            heapq.heappush(self._sleepers, (moment, next(self._order), reached))
            try:
                yield
            finally:
                inside = False
                reached.cancel()

    async def drive(self, runner: Driven) -> None:
        self._runners.append(runner)
        try:
            await asyncio.Event().wait()  # the work is done by `advance`
        finally:
            self._runners.remove(runner)

    async def advance(self, seconds: float = 0.0) -> None:
        """Moves time forward by `seconds`, running everything that falls due on the way."""
        if seconds < 0:
            raise ValueError("time does not go back")
        target = self._now + timedelta(seconds=seconds)
        await self._settle()
        while await self.step(target):
            pass
        self._move_to(target)
        await self._publish()
        await self._settle()

    async def step(self, limit: datetime) -> bool:
        """Moves time to the next moment work falls due, if that is no later than
        `limit`, and runs what is due then; False (time unmoved) when nothing is."""
        upcoming = await self._next_moment()
        if upcoming is None or upcoming > limit:
            return False
        self._move_to(upcoming)
        await self._publish()
        await self._settle()
        return True

    async def _publish(self) -> None:
        if self.published is not None:
            await self.published(self._now)

    def _move_to(self, moment: datetime) -> None:
        self._now = max(self._now, moment)
        while self._sleepers and self._sleepers[0][0] <= self._now:
            _, _, future = heapq.heappop(self._sleepers)
            if not future.done():
                future.set_result(None)

    def _live_sleepers(self) -> bool:
        self._sleepers = [s for s in self._sleepers if not s[2].done()]
        heapq.heapify(self._sleepers)
        return bool(self._sleepers)

    async def _next_moment(self) -> datetime | None:
        moments = [await r.next_stop_after(self._now) for r in self._runners]
        if self._live_sleepers():
            moments.append(self._sleepers[0][0])
        return min((m for m in moments if m is not None), default=None)

    async def _settle(self) -> None:
        """Runs what is due now until nothing more is: no job due, no I/O unfinished
        (or only I/O that has been waiting on the clock for `settle` real seconds)."""
        while True:
            await asyncio.sleep(0)  # let tasks woken by sleepers take their step
            started = 0
            for runner in list(self._runners):
                started += await runner.run_due()
            in_flight = [t for r in self._runners for t in r.io_tasks]
            if in_flight:
                done, _ = await asyncio.wait(
                    in_flight, timeout=self.settle, return_when=asyncio.FIRST_COMPLETED
                )
                if not done and self._live_sleepers():
                    return  # what is left waits on the clock
                continue  # finished, or slow I/O with nothing on the clock: keep waiting
            if not started:
                return


class FollowerClock(WallClock):
    """A delivery worker's clock when the service runs on a manual one: it stands at
    the instant the service's clock last published (stored in the database; the
    worker reads it before each pass, `follow`), and its work runs when woken
    (new work or a new instant), never on a timer. Waits inside a job (an
    attempt's timeout) are real time: they wait on a receiver, in another process
    than the clock's (docs/service/internals.md#scaling)."""

    def __init__(self, start: datetime = MANUAL_START) -> None:
        self._now = start.astimezone(UTC)

    def now(self) -> datetime:
        return self._now

    def seconds(self) -> float:
        return (self._now - MANUAL_START).total_seconds()

    def follow(self, instant: datetime) -> None:
        self._now = max(self._now, instant)

    async def drive(self, runner: Driven) -> None:
        while not runner.stopping.is_set():
            runner.wake.clear()
            try:
                await runner.run_due()
            except Exception:  # the database was busy, say: the next wake-up tries again
                log.exception("the runner could not read its jobs")
            await runner.wake.wait()
