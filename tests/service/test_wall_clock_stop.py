"""The wall clock's drive loop ends when it is cancelled, even when new work wakes it
at the same moment (found as a new user: `agentform apply --allow-past-start` on
`endpoint: local` hung now and then at exit, after "done": Python 3.11's
`asyncio.wait_for` returns the result instead of raising when the awaited event
and the cancellation arrive together, and the loop then waited forever)."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

from agentform.service.clock import WallClock


class StubRunner:
    """What `drive` uses of a runner: work due in a minute, then none."""

    def __init__(self, clock: WallClock) -> None:
        self.clock = clock
        self.wake = asyncio.Event()
        self.stopping = asyncio.Event()
        self.passes = 0
        self.looked_at = clock.now()

    async def run_due(self) -> int:
        self.passes += 1
        return 0

    async def next_due_after(self, moment: datetime) -> datetime | None:
        return moment + timedelta(minutes=1) if self.passes == 1 else None


async def _cancel_as_work_arrives(ticks: int) -> bool:
    """True when drive ended on cancel, with the wake set `ticks` loop turns before."""
    clock = WallClock()
    runner: Any = StubRunner(clock)
    task = asyncio.create_task(clock.drive(runner))
    for _ in range(5):
        await asyncio.sleep(0)  # drive is waiting: for the wake, or a minute
    runner.wake.set()
    for _ in range(ticks):
        await asyncio.sleep(0)
    runner.stopping.set()
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=1)
    if not done:
        task.cancel()  # a second cancel ends it: the test must not hang
        await asyncio.gather(task, return_exceptions=True)
    return bool(done)


def test_drive_ends_on_cancel_even_as_new_work_wakes_it() -> None:
    for ticks in range(6):  # every moment the wake-up can be in flight
        assert asyncio.run(_cancel_as_work_arrives(ticks)), ticks
