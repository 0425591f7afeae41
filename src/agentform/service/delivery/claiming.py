"""The runner of a delivery worker process: it runs only the jobs it has claimed.

It is the runtime's `Runner` (prepare, perform and record of each I/O job, group
commits, one job per lane at a time) with one change: the due jobs it starts are
chosen and claimed in one write transaction (`store.claims`), fairly across
organizations and integrations as in-process (`fairness.choose` counts every
process's claims), so two workers never start the same job, and a lane's job is
in one worker at a time. Every step that writes checks the claim is still this
worker's: a worker that lost its claim (its lease ran out while it was stalled,
and another took the job) records nothing, and the new claimant sends again (at
least once). Its leases are renewed every `RENEW_SECONDS` of real time.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection
from datetime import datetime, timedelta
from typing import Any

from agentform.service.clock import FollowerClock, wall_now
from agentform.service.runtime.handlers import IoJobHandler
from agentform.service.runtime.job_runs import NOTHING
from agentform.service.runtime.runner import Runner
from agentform.service.runtime.transactional import record_failure
from agentform.service.store import claims, jobs
from agentform.service.store.database import Conn
from agentform.service.store.jobs import Job

log = logging.getLogger("agentform.service.delivery")

LEASE = timedelta(seconds=15)
"""How long a claim holds unless renewed: a killed worker's jobs are taken again
after it (the supervisor frees them at once when it sees the worker die)."""
RENEW_SECONDS = 3.0


def in_flight(conn: Conn, kind: str, running: Collection[int]) -> set[int]:
    """The jobs of `kind` in flight across the service: this worker's `running` and
    those other workers hold live claims on, so that shares are the whole service's."""
    return set(running) | claims.live_ids(conn, kind, wall_now())


class ClaimingRunner(Runner):
    sole = False  # the jobs it runs are claimed with leases: it shares the database

    def __init__(self, *args: Any, worker_id: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.worker_id = worker_id
        self.claiming = True
        """False once the worker is stopping: it finishes what it holds, takes nothing new."""

    async def _take_due(self, now: datetime, free: int) -> tuple[list[Job], int]:
        if not self.claiming:
            return [], 0
        return await self._in_thread(self._claim, free, set(self._io), set(self._lanes))

    def _claim(self, free: int, running: set[int], busy: set[str]) -> tuple[list[Job], int]:
        """Chooses and claims up to `free` due jobs, none of a lane this worker is
        still sending (`busy`: it is between a job and its successor). A claim of
        this worker on a job it is not `running` is freed first, so nothing it
        once claimed and did not start stays held (its lease renewed) for ever."""
        with self.db.write() as conn:
            claims.release(conn, self.worker_id, keep=running)
            if isinstance(self.clock, FollowerClock):
                instant = claims.read_instant(conn)
                if instant is not None:
                    self.clock.follow(instant)
            now = self.looked_at = self.clock.now()
            chosen: list[Job] = []
            for kind in self._io_kinds():
                handler = self.handlers.get(kind)
                assert isinstance(handler, IoJobHandler)
                room = free - len(chosen)
                taken = in_flight(conn, kind, running)
                picked = handler.choose_due(conn, kind, now, taken, room)
                if picked is None:  # a kind with no choice of its own: oldest first
                    picked = jobs.due_jobs(conn, now, taken, room, kinds=[kind])
                chosen += [job for job in picked if job.lane not in busy]
            claims.claim(conn, [job.id for job in chosen], self.worker_id, wall_now() + LEASE)
            return chosen, jobs.newest_id(conn)

    def _holds(self, conn: Conn, job: Job) -> bool:
        return claims.held(conn, job.id, self.worker_id, wall_now())

    def _prepare(self, job: Job, handler: IoJobHandler[Any, Any], conn: Conn) -> Any:
        return super()._prepare(job, handler, conn) if self._holds(conn, job) else NOTHING

    def _record(
        self, job: Job, handler: IoJobHandler[Any, Any], prepared: Any, out: Any, conn: Conn
    ) -> Any:
        if not self._holds(conn, job):
            log.warning("job %s was taken by another worker; its attempts are sent again", job.id)
            return NOTHING
        return super()._record(job, handler, prepared, out, conn)

    def _fail(self, job: Job, exc: Exception) -> None:
        with self.db.write() as conn:
            if self._holds(conn, job):
                record_failure(conn, job, exc)

    def _prune(self, before: datetime) -> None:
        """The service's runner prunes the jobs table; a worker leaves it alone."""

    def renew(self) -> None:
        with self.db.write() as conn:
            claims.renew(conn, self.worker_id, wall_now() + LEASE)

    def release(self) -> None:
        with self.db.write() as conn:
            claims.release(conn, self.worker_id)

    async def keep_leases(self) -> None:
        """Renews this worker's leases until cancelled."""
        while True:
            await asyncio.sleep(RENEW_SECONDS)
            try:
                await self._in_thread(self.renew)
            except Exception:  # busy database: the lease has room for the next try
                log.exception("renewing the delivery worker's leases failed")

    async def drain(self, seconds: float) -> None:
        """Takes nothing new and lets the attempts in flight finish (at most `seconds`)."""
        self.claiming = False
        if self.io_tasks:
            await asyncio.wait(self.io_tasks, timeout=seconds)
