"""A plan on an idle core, modelled: an asyncio event loop whose clock is the CPU
time the process has used plus every wait it skipped, so a run's wall time is
what it would be with a core of its own, whatever the machine's load.

A wait is skipped as epoll sleeps: rounded up to the next millisecond (an
asyncio timer wakes up to 1 ms late, the way `selectors.EpollSelector` asks
epoll_wait to sleep). With that, the model gives the figures an idle machine
measured: plan / sleep loop 1.074-1.077x at 1k and 1.052-1.056x at 10k
before IW10 (docs/performance.md#plan-at-scale). It holds only for runs that
wait on timers alone (replayed answers, `asyncio.sleep`), not on sockets.
"""

from __future__ import annotations

import asyncio
import math
import selectors
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class _SkippingSelector(selectors.DefaultSelector):
    """Answers at once; a wait with nothing ready is added to `skipped` instead."""

    def __init__(self) -> None:
        super().__init__()
        self.skipped = 0.0

    def select(self, timeout: float | None = None) -> list[Any]:
        ready = super().select(0)
        if ready or timeout is None:  # (None: only another thread can wake it)
            return ready or super().select(timeout)
        self.skipped += math.ceil(timeout * 1e3) * 1e-3
        return []


class IdleCoreLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        self._skipping = _SkippingSelector()
        super().__init__(selector=self._skipping)

    def time(self) -> float:
        return self._skipping.skipped + time.process_time()


class LoopClock:
    """The client's clock (api/clock.py) read from the running loop, so latencies it
    measures are the model's."""

    def now(self) -> float:
        return asyncio.get_running_loop().time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def on_idle_core(coro: Coroutine[Any, Any, T]) -> tuple[T, float]:
    """`coro`'s result and its modelled wall time in seconds."""
    loop = IdleCoreLoop()
    try:
        start = loop.time()
        result = loop.run_until_complete(coro)
        return result, loop.time() - start
    finally:
        loop.close()
