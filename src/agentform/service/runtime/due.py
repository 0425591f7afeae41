"""Which due jobs a runner's pass takes (runtime/runner.py): transactional ones
read ahead, and only as many I/O jobs as it has free slots for, each I/O kind's
chosen by its handler when it chooses (for fairness) or else oldest first."""

from __future__ import annotations

from datetime import datetime

from agentform.service.runtime.handlers import IoJobHandler, JobHandlers
from agentform.service.store import jobs
from agentform.service.store.database import Conn
from agentform.service.store.jobs import Job

READ_AHEAD = 256


def due_batch(
    conn: Conn,
    handlers: JobHandlers,
    now: datetime,
    in_flight: set[int],
    free: int,
    busy: set[str],
) -> tuple[list[Job], int]:
    """The due jobs that may start now, in due order: transactional ones (and any
    of a kind nobody handles, to be reported) up to READ_AHEAD, and only as many
    I/O jobs, of lanes not busy, as there are free I/O slots. So a backlog of
    I/O work costs each pass what the slots can take, not the backlog's length,
    and never holds transactional jobs back."""
    kinds = io_kinds(handlers)
    batch = jobs.due_jobs(conn, now, in_flight, READ_AHEAD, not_kinds=kinds)
    if free > 0 and kinds:
        batch += _due_io(conn, handlers, now, in_flight, free, busy, kinds)
    return sorted(batch, key=lambda job: (job.due_at, job.id)), jobs.newest_id(conn)


def _due_io(
    conn: Conn,
    handlers: JobHandlers,
    now: datetime,
    in_flight: set[int],
    free: int,
    busy: set[str],
    kinds: list[str],
) -> list[Job]:
    """Due I/O jobs for the free slots: a handler that chooses its own
    (`IoJobHandler.choose_due`, for fairness among its jobs) does; the others'
    are read oldest first."""
    chosen, plain = [], []
    for kind in kinds:
        handler = handlers.get(kind)
        assert isinstance(handler, IoJobHandler)
        own = handler.choose_due(conn, kind, now, in_flight, free)
        if own is None:
            plain.append(kind)
        else:
            chosen += own
    if plain:
        chosen += jobs.due_jobs(conn, now, in_flight, free, kinds=plain, busy_lanes=busy)
    return chosen


def io_kinds(handlers: JobHandlers) -> list[str]:
    """The job kinds whose handlers do I/O (each run as its own task)."""
    return [k for k in handlers.kinds() if isinstance(handlers.get(k), IoJobHandler)]
