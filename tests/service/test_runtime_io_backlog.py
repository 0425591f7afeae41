"""I/O jobs at their concurrency limit do not hold back transactional jobs: a backlog
of webhook deliveries (or a receiver that hangs) must not stop executions' steps."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from agentform.service.runtime import IoJobHandler, JobHandlers, ManualClock, RunContext, Runner
from agentform.service.store import jobs
from agentform.service.store.database import Conn, Database
from agentform.service.store.jobs import Job

pytestmark = pytest.mark.anyio
T0 = datetime.fromisoformat("2025-03-01T12:00:00+00:00")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def handlers(ran: list[str]) -> JobHandlers:
    registry = JobHandlers()

    @registry.io_handler("slow-io")
    class SlowIo(IoJobHandler[str, str]):
        def prepare(self, job: Job, conn: Conn, _: RunContext) -> str:
            return str(job.payload["name"])

        async def perform(self, job: Job, prepared: str, context: RunContext) -> str:
            await context.clock.sleep(100)  # a receiver that takes its time
            return prepared

        def record(self, job: Job, conn: Conn, prepared: str, outcome: str, _: RunContext) -> None:
            ran.append(outcome)

    @registry.handler("step")
    def _step(job: Job, conn: Conn, _: RunContext) -> None:
        ran.append(job.payload["name"])

    return registry


async def test_a_full_io_pool_lets_transactional_jobs_run(tmp_path: Path) -> None:
    clock, ran = ManualClock(T0), list[str]()
    db = Database(tmp_path / "s.db", now=clock.now)
    runner = Runner(db, clock, handlers(ran), io_concurrency=2)
    with db.write() as conn:
        for n in range(5):  # more I/O than the pool takes, due first
            jobs.schedule(conn, "slow-io", T0, {"name": f"io-{n}"})
        jobs.schedule(conn, "step", T0 + timedelta(seconds=1), {"name": "step"})
    await runner.start()
    try:
        await clock.advance(1)
        assert ran == ["step"]  # two I/O jobs in flight, three waiting: the step ran anyway
        await clock.advance(300)
        assert sorted(ran) == ["io-0", "io-1", "io-2", "io-3", "io-4", "step"]
    finally:
        await runner.stop()
        db.close()


def test_due_jobs_filters_by_kind_and_busy_lane(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    db = Database(tmp_path / "s.db", now=clock.now)
    with db.write() as conn:
        ids = [
            jobs.schedule(conn, "io", T0, {}, lane="a"),
            jobs.schedule(conn, "io", T0, {}, lane="b"),
            jobs.schedule(conn, "step", T0, {}),
            jobs.schedule(conn, "other", T0, {}),
            jobs.schedule(conn, "io", T0 + timedelta(seconds=5), {}),  # not due yet
        ]
    with db.read() as conn:

        def due(**kw: object) -> list[int]:
            return [j.id for j in jobs.due_jobs(conn, T0, set(), 10, **kw)]  # type: ignore[arg-type]

        assert due() == ids[:4]
        assert due(kinds=["io"]) == ids[:2]
        assert due(kinds=["io"], busy_lanes={"a"}) == [ids[1]]
        assert due(not_kinds=["io"]) == ids[2:4]  # a kind nobody handles is still read
        assert [j.id for j in jobs.due_jobs(conn, T0, {ids[0]}, 1)] == [ids[1]]
    db.close()
