"""How a runner runs its jobs, once its pass chose them (runtime/runner.py): work
in a thread (no SQLite call on the event loop), a transactional job in a write
transaction of its own when a shared one failed, an I/O job as its own task
through its handler's prepare, perform and record (prepare and record in write
transactions shared with other jobs', grouped.py), a failure recorded `failed`.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any, TypeVar

from agentform.service.runtime.context import RunContext
from agentform.service.runtime.grouped import GroupCommit
from agentform.service.runtime.handlers import Done, IoJobHandler, TxHandler
from agentform.service.runtime.transactional import record_failure, run_one
from agentform.service.store import jobs
from agentform.service.store.database import Conn, Database
from agentform.service.store.jobs import Job

T = TypeVar("T")
NOTHING = object()
"""What `_prepare` and `_record` return when the job has no more work here."""


class JobRuns:
    """The jobs a runner has started: its I/O tasks (by job id), their busy lanes,
    and the work it handed to threads."""

    def __init__(self, db: Database, context: RunContext) -> None:
        self.db = db
        self.context = context
        self.wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._io: dict[int, asyncio.Task[None]] = {}  # job id -> task
        self._grouped = GroupCommit(db, self._in_thread)  # I/O jobs' prepare and record
        self._lanes: set[str] = set()
        self._threads: set[asyncio.Future[Any]] = set()

    async def _in_thread(self, fn: Callable[..., T], *args: Any) -> T:
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(None, functools.partial(fn, *args))
        self._threads.add(future)
        future.add_done_callback(self._threads.discard)
        return await asyncio.shield(future)

    def _read(self, query: Callable[..., T], *args: Any) -> T:
        with self.db.read() as conn:
            return query(conn, *args)

    def _run_transaction(self, job: Job, handler: TxHandler) -> None:
        """The job in a write transaction of its own (when a shared one failed)."""
        try:
            with self.db.write() as conn:
                run_one(conn, job, handler, self.context)
        except Exception as exc:
            self._fail(job, exc)

    def _fail(self, job: Job, exc: Exception) -> None:
        with self.db.write() as conn:
            record_failure(conn, job, exc)

    def _spawn(self, job: Job, handler: IoJobHandler[Any, Any]) -> None:
        if job.lane is not None:
            self._lanes.add(job.lane)
        assert self._loop is not None, "the runner is not started"
        task = self._loop.create_task(self._run_io(job, handler), name=f"job-{job.id}")
        self._io[job.id] = task

    async def _run_io(self, job: Job, handler: IoJobHandler[Any, Any]) -> None:
        try:
            # prepare and record share write transactions with other jobs' (grouped.py)
            prepared = await self._grouped.run(functools.partial(self._prepare, job, handler))
            while prepared is not NOTHING:  # `record` may hand back the job's next work
                outcome = await handler.perform(job, prepared, self.context)
                prepared = await self._grouped.run(
                    functools.partial(self._record, job, handler, prepared, outcome)
                )
        except asyncio.CancelledError:
            raise  # stopped: the job stays pending
        except Exception as exc:
            await self._in_thread(self._fail, job, exc)
        finally:
            self._io.pop(job.id, None)
            if job.lane is not None:
                self._lanes.discard(job.lane)
            self.wake.set()

    def _prepare(self, job: Job, handler: IoJobHandler[Any, Any], conn: Conn) -> Any:
        if not jobs.is_pending(conn, job.id):
            return NOTHING
        prepared = handler.prepare(job, conn, self.context)
        if prepared is None:
            jobs.mark_done(conn, job.id)
            return NOTHING
        return prepared

    def _record(
        self, job: Job, handler: IoJobHandler[Any, Any], prepared: Any, out: Any, conn: Conn
    ) -> Any:
        following = handler.record(job, conn, prepared, out, self.context)
        if following is None or isinstance(following, Done):
            jobs.mark_done(conn, job.id)
            if following is not None:
                following.then(conn)
            return NOTHING
        return following
