"""A pass's transactional jobs as steps of the group commit (grouped.py).

The runner used to run each transactional job (an execution's step, say) in a
write transaction of its own, handed to a worker thread and back: with many
executions running, the transactions and hand-backs, not the work in them,
were the cost. Now a pass queues its run of due transactional jobs on the
group commit at once: they share write transactions with each other and with
I/O jobs' prepare and record, each in its own savepoint, still one at a time
and in due order. A job that raises is rolled back alone and recorded
`failed` in that same transaction.

Due order holds across the run as it did job by job: before each job, its
step looks for a job scheduled since the pass read its batch (by this
transaction's earlier steps or anyone else) that falls due before it, and
for the run's previous job left pending (its transaction failed); either
way this job and the rest of the run stay pending, and the runner reads again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from agentform.service.runtime.context import RunContext
from agentform.service.runtime.handlers import TxHandler
from agentform.service.store import jobs
from agentform.service.store.database import Conn
from agentform.service.store.jobs import Job
from agentform.service.store.steps import undone_on_error

log = logging.getLogger("agentform.service.runtime")


def record_failure(conn: Conn, job: Job, exc: Exception) -> None:
    log.error("job %s (%s) failed", job.id, job.kind, exc_info=exc)
    jobs.mark_failed(conn, job.id, f"{type(exc).__name__}: {exc}")


def run_one(conn: Conn, job: Job, handler: TxHandler, context: RunContext) -> None:
    """The job in the caller's transaction: done with its effects, or failed without them."""
    try:
        with undone_on_error(conn):
            if jobs.is_pending(conn, job.id):  # not cancelled since it was read
                # Done first: a successor it schedules under its own key takes the key
                # instead of cancelling it.
                jobs.mark_done(conn, job.id)
                handler(job, conn, context)
    except Exception as exc:
        if not conn.in_transaction:
            raise  # the handler ended the transaction: nothing more is written in it
        record_failure(conn, job, exc)


class TxRun:
    """One pass's transactional jobs, in due order, as group-commit steps."""

    def __init__(self, since: int, context: RunContext) -> None:
        self.since = since  # the newest job the pass's read saw
        self.context = context
        self.earliest: datetime | None = None  # of the jobs scheduled since
        self.previous: Job | None = None
        self.stopped = False

    def step(self, job: Job, handler: TxHandler) -> Callable[[Conn], bool]:
        """The group-commit step running `job`: True when it ran, False when it
        stays pending (the run stopped before it)."""
        previous, self.previous = self.previous, job

        def run(conn: Conn) -> bool:
            if self.stopped or self._must_stop(conn, job, previous):
                self.stopped = True
                return False
            run_one(conn, job, handler, self.context)
            return True

        return run

    def _must_stop(self, conn: Conn, job: Job, previous: Job | None) -> bool:
        if previous is not None and jobs.is_pending(conn, previous.id):
            return True  # the previous job's transaction failed: it goes first
        newest, earliest = jobs.scheduled_after(conn, self.since)
        if newest is not None:
            self.since = newest
        if earliest is not None and (self.earliest is None or earliest < self.earliest):
            self.earliest = earliest
        return self.earliest is not None and self.earliest < job.due_at
