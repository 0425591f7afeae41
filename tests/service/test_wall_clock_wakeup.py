"""The wall clock's drive loop runs a job that falls due while the loop is between
looking for due work and asking when the next work falls due (issue 20: a scripted
execution now and then stayed `running` long after its script's end, until some
other request woke the runner).

The loop looked for due jobs at one moment, then asked for the first job due after
a *later* moment: a job falling due in between was neither run nor waited for, and
with nothing else to do the loop slept until woken. Here the clock moves 10 ms each
time it is read (a loaded machine: every step of the loop takes time), and a job is
placed at every offset, so some offset falls in that gap whatever the loop's steps."""

from __future__ import annotations

import asyncio
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agentform.service.clock import WallClock
from agentform.service.runtime import JobHandlers, RunContext, Runner
from agentform.service.store import jobs
from agentform.service.store.database import Conn, Database
from agentform.service.store.jobs import Job

START = datetime(2026, 1, 1, tzinfo=UTC)


class BusyClock(WallClock):
    """Wall-clock behaviour (real waits in `drive`), but a time that moves `step`
    each time it is read."""

    def __init__(self, step: timedelta) -> None:
        self.moment = START
        self.step = step

    def now(self) -> datetime:
        self.moment += self.step
        return self.moment


async def _runs(db: Database, offset_ms: int) -> bool:
    """Whether a job due `offset_ms` after the clock's time runs within 2 real seconds."""
    ran = threading.Event()
    handlers = JobHandlers()

    @handlers.handler("tick")
    def tick(job: Job, conn: Conn, _: RunContext) -> None:
        ran.set()

    clock = BusyClock(timedelta(milliseconds=10))
    with db.write() as conn:
        jobs.schedule(conn, "tick", clock.moment + timedelta(milliseconds=offset_ms))
    runner = Runner(db, clock, handlers)
    await runner.start()
    try:
        for _ in range(200):
            if ran.is_set():
                return True
            await asyncio.sleep(0.01)
        return False
    finally:
        await runner.stop()


@pytest.mark.parametrize("offset_ms", range(0, 60, 3))
def test_a_job_falling_due_between_two_looks_runs(tmp_path: Path, offset_ms: int) -> None:
    db = Database(tmp_path / "service.db", now=lambda: START)
    try:
        assert asyncio.run(_runs(db, offset_ms))
    finally:
        db.close()
