"""Clocks for tests of time-driven client behaviour: no real sleep anywhere."""

from __future__ import annotations

import asyncio
import heapq
import itertools


class InstantClock:
    """Every sleep returns at once and moves the time on by its length (one waiter at a
    time: exact for one request, its retries and its pauses). `sleeps` records them."""

    def __init__(self, sleeps: list[float] | None = None) -> None:
        self.time = 1000.0
        self.sleeps = sleeps if sleeps is not None else []

    def now(self) -> float:
        return self.time

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.time += seconds
        await asyncio.sleep(0)


class ManualClock:
    """Time moves only when the test calls `advance`; sleepers wake in time order."""

    def __init__(self) -> None:
        self.time = 1000.0
        self.sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self.order = itertools.count()

    def now(self) -> float:
        return self.time

    async def sleep(self, seconds: float) -> None:
        waiter = asyncio.get_running_loop().create_future()
        heapq.heappush(self.sleepers, (self.time + seconds, next(self.order), waiter))
        await waiter

    async def settle(self) -> None:
        """Lets every task that can run, run."""
        for _ in range(20):
            await asyncio.sleep(0)

    async def advance(self, seconds: float) -> None:
        target = self.time + seconds
        await self.settle()
        while self.sleepers and self.sleepers[0][0] <= target:
            wake, _, waiter = heapq.heappop(self.sleepers)
            self.time = max(self.time, wake)
            if not waiter.done():
                waiter.set_result(None)
            await self.settle()
        self.time = target
        await self.settle()
