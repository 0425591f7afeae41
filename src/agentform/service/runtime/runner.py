"""The runner: one asyncio task per app that runs due jobs as the clock says.

The clock drives it (`Clock.drive`): the wall clock in a loop, the manual
clock from `advance`. Each pass (`run_due`) reads the pending jobs due now, in
due order, and runs them: a transactional handler in a write transaction shared
with other jobs' (`transactional`, `grouped`: in a worker thread, one at a time,
so their effects apply in due order), an I/O handler as its own task (at most
`io_concurrency` at once; one at a time per lane). A handler that raises is
recorded `failed` and the runner goes on. No SQLite call is made on the event loop.
Which due jobs a pass takes is runtime/due.py; how a started job runs is
runtime/job_runs.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import threading
from datetime import UTC, datetime, timedelta

from agentform.service.clock import Clock
from agentform.service.runtime import exclusive
from agentform.service.runtime.context import RunContext
from agentform.service.runtime.due import due_batch, io_kinds
from agentform.service.runtime.handlers import IoJobHandler, JobHandlers, TxHandler
from agentform.service.runtime.job_runs import JobRuns
from agentform.service.runtime.transactional import TxRun
from agentform.service.settings import ServiceSettings
from agentform.service.start_errors import UnhandledJobKind
from agentform.service.store import jobs
from agentform.service.store.database import Database
from agentform.service.store.jobs import JOBS_CHANGED, Job

log = logging.getLogger("agentform.service.runtime")
_EARLIEST = datetime.min.replace(tzinfo=UTC)
IO_SLOTS = 128
"""I/O jobs running at once, by default (delivery/fairness.py shares them out)."""
PRUNE_EVERY = timedelta(hours=1)


class Runner(JobRuns):
    sole = True
    """It runs every due job of its database, so one process at most may
    (runtime/exclusive.py); a runner claiming its jobs with leases shares it."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        handlers: JobHandlers,
        *,
        io_concurrency: int = IO_SLOTS,
        settings: ServiceSettings | None = None,
        retention: timedelta = timedelta(days=1),
    ) -> None:
        super().__init__(db, RunContext(clock, db, settings or ServiceSettings()))
        self.clock = clock
        self.handlers = handlers
        self.io_concurrency = io_concurrency
        self.retention = retention
        self.stopping = asyncio.Event()
        """Set when `stop` begins: whoever waits for work the runner would do gives up."""
        self._task: asyncio.Task[None] | None = None
        self._scheduled: datetime | None = None
        """The earliest due time of the jobs scheduled since the last read (None: none)."""
        self._scheduled_lock = threading.Lock()  # pokes come from any committing thread
        self._pruned_at: datetime | None = None
        self.looked_at: datetime = clock.now()
        """The moment `run_due` last looked for due jobs: work due after it was not seen,
        so the clock's next wait is for the first job due after this moment (not after
        a later `now`, which would skip a job falling due in between)."""

    # -- lifecycle ------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._task is not None

    async def start(self) -> None:
        """Starts the background task on the running loop (a second call does nothing)."""
        if self._task is not None:
            return
        if self.sole:
            exclusive.acquire(self.db.path)  # one process runs a database's due work
        self._loop = asyncio.get_running_loop()
        self.wake = asyncio.Event()
        self.stopping = asyncio.Event()
        self.db.listen(JOBS_CHANGED, self._poke)
        self._task = self._loop.create_task(self.clock.drive(self), name="agentform-runner")

    async def stop(self) -> None:
        """Stops the task; unfinished I/O jobs stay pending and run after the next start."""
        task, self._task = self._task, None
        if task is None:
            return
        try:
            self.stopping.set()
            self.db.unlisten(JOBS_CHANGED, self._poke)
            task.cancel()
            io = list(self._io.values())
            for t in io:
                t.cancel()
            await asyncio.gather(task, *io, return_exceptions=True)
            # A transaction already handed to a thread finishes (commits or rolls back).
            await asyncio.gather(*self._threads, return_exceptions=True)
            await self._grouped.aclose()
            await self.context.aclose()
        finally:
            if self.sole:
                exclusive.release(self.db.path)

    def _poke(self, due_at: datetime | None = None) -> None:
        """After a commit that scheduled a job due at `due_at` (on any thread): look
        again (None, a due time not said: as if due before anything in hand)."""
        with self._scheduled_lock:
            earliest = self._scheduled
            if due_at is None:
                due_at = _EARLIEST
            if earliest is None or due_at < earliest:
                self._scheduled = due_at
        loop = self._loop
        if loop is not None and not loop.is_closed():
            # The loop may close in between: then there is nothing left to wake.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self.wake.set)

    # -- what the clocks call -------------------------------------------------

    @property
    def io_tasks(self) -> list[asyncio.Task[None]]:
        return list(self._io.values())

    async def next_due_after(self, moment: datetime) -> datetime | None:
        return await self._in_thread(self._read, jobs.next_due_after, moment)

    async def next_stop_after(self, moment: datetime) -> datetime | None:
        """When the first job due after `moment` that is not upkeep falls due."""
        query = functools.partial(jobs.next_due_after, not_kinds=self.handlers.upkeep_kinds())
        return await self._in_thread(self._read, query, moment)

    async def run_due(self) -> int:
        """Starts every job due now that can start, in due order; returns how many."""
        started = 0
        now = self.clock.now()
        if self._pruned_at is None or now - self._pruned_at >= PRUNE_EVERY:
            self._pruned_at = now
            await self._in_thread(self._prune, now - self.retention)
        while True:
            with self._scheduled_lock:
                self._scheduled = None
            now = self.looked_at = self.clock.now()
            free = self.io_concurrency - len(self._io)
            batch, newest = await self._take_due(now, free)
            ran, stopped = await self._pass(batch, TxRun(newest, self.context))
            started += ran
            if not ran and not stopped:
                if self.io_concurrency - len(self._io) > free:
                    continue  # I/O finished while reading: read again for the free slots
                return started

    async def _pass(self, batch: list[Job], run: TxRun) -> tuple[int, bool]:
        """Starts the batch's jobs that can start, in order: (how many, whether it
        stopped for a job scheduled since the read and due before the next).

        A job scheduled since the read that falls due before the next one in hand
        stops the pass, so due order holds; one due with it or later comes after it
        anyway (ties go in the order scheduled), so each job does not pay a re-read
        of everything due. Transactional jobs are queued on the group commit
        together (transactional.py), and wait for each other; an I/O job starts
        once the transactional jobs before it are done.
        """
        started, queued = 0, list[tuple[Job, TxHandler, asyncio.Future[bool]]]()
        for job in batch:
            if self._scheduled_before(job):
                return started + await self._finish(queued), True
            if job.lane is not None and job.lane in self._lanes:
                continue  # its lane is busy: it waits its turn
            handler = self.handlers.get(job.kind)
            if isinstance(handler, IoJobHandler) and self._io_full():
                continue  # it waits for a free slot; jobs behind it may run
            if handler is not None and not isinstance(handler, IoJobHandler):
                step = self._grouped.run(run.step(job, handler))
                queued.append((job, handler, asyncio.ensure_future(step)))
                continue
            started += await self._finish(queued)
            queued = []
            if run.stopped:
                return started, True
            if handler is None:
                # scheduled since the start checked the kinds: a defect, said loudly
                await self._in_thread(self._fail, job, UnhandledJobKind([job.kind]))
            else:
                self._spawn(job, handler)
            started += 1
        return started + await self._finish(queued), run.stopped

    async def _finish(self, queued: list[tuple[Job, TxHandler, asyncio.Future[bool]]]) -> int:
        """Waits for the queued transactional jobs; how many ran. A job whose shared
        transaction failed runs on its own (as the first of the rest, which stay
        pending: the run has stopped before them)."""
        ran = 0
        for n, (job, handler, step) in enumerate(queued):
            try:
                ran += await step
            except asyncio.CancelledError:
                raise
            except Exception:
                await asyncio.gather(*(s for _, _, s in queued[n + 1 :]), return_exceptions=True)
                await self._in_thread(self._run_transaction, job, handler)
                return ran + 1
        return ran

    def _scheduled_before(self, job: Job) -> bool:
        earliest = self._scheduled
        return earliest is not None and earliest < job.due_at

    async def _take_due(self, now: datetime, free: int) -> tuple[list[Job], int]:
        """The due jobs this runner may start now, and the newest job's id then (a
        delivery worker claims its jobs: service/delivery/claiming.py)."""
        return await self._in_thread(
            self._read, due_batch, self.handlers, now, set(self._io), free, set(self._lanes)
        )

    def _io_full(self) -> bool:
        return len(self._io) >= self.io_concurrency

    def _io_kinds(self) -> list[str]:
        return io_kinds(self.handlers)

    def _prune(self, before: datetime) -> None:
        with self.db.write() as conn:
            jobs.prune(conn, before)
