"""Retention on the clock: a runner job that forgets history older than the service's
`retain` setting (docs/guide/security.md#retention), a batch at a time.

The job deletes one batch of each kind (store/retention.py) in its own short
transaction. When a batch came back full there is more: the job runs again at
once, but as a new job due now, so the deliveries and steps already due run first;
otherwise it looks again after `EVERY`. So a month of history is forgotten in
many transactions of a few milliseconds, never in one that holds up a delivery.

It is upkeep (runtime/handlers.py): a manual clock does not stop for its looks,
so it may run hours after it fell due. It then forgets what its last look due by
now would have (`_look`), and keeps its hourly instants: a move in one step
leaves the history that the same move hour by hour leaves, at a cost that does
not grow with the simulated time.
`prune_now` does the same on demand (`agentform service prune --older-than AGE`),
for one organization.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta

from agentform.service.runtime import RunContext
from agentform.service.store import jobs, retention
from agentform.service.store.database import Conn, Database, iso, parse_iso
from agentform.service.store.jobs import Job
from agentform.service.store.retention import prune_batch

RETENTION_JOB = "upkeep.retention"
KEY = "upkeep.retention"
EVERY = timedelta(hours=1)
"""How often the job looks for history past the retention, when it found none."""
LOOK = "look"


def schedule_retention(conn: Conn, retain: timedelta | None) -> None:
    """Starts the job now (or stops it, when nothing is to be forgotten): one pending
    job at most."""
    if retain is None:
        jobs.cancel(conn, KEY)
    else:
        jobs.schedule(conn, RETENTION_JOB, conn.now(), key=KEY)


def forget_old_history(job: Job, conn: Conn, context: RunContext) -> None:
    """The handler of RETENTION_JOB: one batch, then the next run."""
    retain = context.settings.retain
    if retain is None:  # a service started since without retention
        return
    look = _look(job, conn.now())
    counts = prune_batch(conn, look - retain)
    jobs.mark_done(conn, job.id)  # first, so the next run can take the key
    if max(counts.values()) >= retention.BATCH:  # the same look goes on, due now
        jobs.schedule(conn, RETENTION_JOB, conn.now(), {LOOK: iso(look)}, key=KEY)
    else:
        jobs.schedule(conn, RETENTION_JOB, look + EVERY, key=KEY)


def _look(job: Job, now: datetime) -> datetime:
    """The instant this run looks as of: the one a continued look carries, else the
    last of the job's hourly instants by `now` (its own, unless it ran late)."""
    if LOOK in job.payload:
        return parse_iso(job.payload[LOOK])
    return job.due_at + (now - job.due_at) // EVERY * EVERY


def prune_now(db: Database, before: datetime, organization_id: str) -> dict[str, int]:
    """Forgets the organization's history older than `before`, a batch a transaction;
    returns how many rows of each kind went."""
    total: Counter[str] = Counter()
    while True:
        with db.write() as conn:
            counts = prune_batch(conn, before, organization_id)
        total.update(counts)
        if max(counts.values()) < retention.BATCH:
            return {kind: total[kind] for kind in counts}
