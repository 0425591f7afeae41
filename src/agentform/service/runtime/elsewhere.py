"""A job kind another process runs: the delivery workers' (service/delivery/worker.py).

The service's runner keeps a handler for the kind, so start-up knows it and
never calls its pending jobs unhandled, but it does not run them. On the wall
clock it never starts one. On a manual clock it watches each due one instead:
the job is in flight here until another process has done it (it is no longer
pending), so `ManualClock.advance` waits for the workers as it waits for its own
I/O, and moves time on only once what was due has been delivered.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from datetime import datetime

from agentform.service.runtime.context import RunContext
from agentform.service.runtime.handlers import IoJobHandler
from agentform.service.store import jobs
from agentform.service.store.database import Conn, Database
from agentform.service.store.jobs import Job

POLL_SECONDS = 0.005
"""How often a watched job is looked at again (real time: the wait is on another process)."""


class Elsewhere(IoJobHandler[int, None]):
    def __init__(self, *, watch: bool) -> None:
        self.watch = watch
        self._watched: dict[int, asyncio.Future[None]] = {}
        self._looking: asyncio.Task[None] | None = None

    def choose_due(
        self, conn: Conn, kind: str, now: datetime, in_flight: Collection[int], free: int
    ) -> list[Job] | None:
        return None if self.watch else []  # None: the runner's oldest-first choice

    def prepare(self, job: Job, conn: Conn, context: RunContext) -> int:
        return job.id

    async def perform(self, job: Job, prepared: int, context: RunContext) -> None:
        """Returns once the job is no longer pending. One task looks at every watched
        job at once, with one query, however many are in flight."""
        done = self._watched.get(job.id)
        if done is None:
            done = self._watched[job.id] = asyncio.get_running_loop().create_future()
        if self._looking is None or self._looking.done():
            self._looking = asyncio.create_task(self._look(context.db))
        try:
            await asyncio.shield(done)
        finally:
            self._watched.pop(job.id, None)

    async def _look(self, db: Database) -> None:
        while self._watched:
            ids = list(self._watched)
            pending = await asyncio.to_thread(_pending, db, ids)
            for job_id in ids:
                done = self._watched.get(job_id)
                if job_id not in pending and done is not None and not done.done():
                    done.set_result(None)
            await asyncio.sleep(POLL_SECONDS)

    def record(
        self, job: Job, conn: Conn, prepared: int, outcome: None, context: RunContext
    ) -> None:
        return None  # the other process marked it done (marking it again changes nothing)


def _pending(db: Database, ids: list[int]) -> set[int]:
    with db.read() as conn:
        return jobs.pending_among(conn, ids)
