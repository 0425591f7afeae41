"""002: the runtime's tables: durable jobs (the outbox of time-driven work) and events.

`jobs` holds work that falls due on the clock; a job is pending until the
transaction that does its work marks it done (or failed, or cancelled).
`events` holds what happened to executions and batches, in the order appended.
"""

SQL = """
CREATE TABLE jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    due_at TEXT NOT NULL,
    payload TEXT NOT NULL,
    key TEXT,
    lane TEXT,
    status TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'done', 'failed', 'cancelled')),
    error TEXT,
    created_at TEXT NOT NULL,
    finished_at TEXT
);
CREATE INDEX jobs_due ON jobs (due_at, id) WHERE status = 'pending';
CREATE UNIQUE INDEX jobs_pending_key ON jobs (key) WHERE status = 'pending' AND key IS NOT NULL;
CREATE INDEX jobs_finished ON jobs (finished_at) WHERE status IN ('done', 'cancelled');
CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL,
    execution_id TEXT,
    batch_id TEXT,
    event TEXT NOT NULL,
    payload TEXT NOT NULL,
    metadata TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX events_execution ON events (execution_id, seq) WHERE execution_id IS NOT NULL;
CREATE INDEX events_batch ON events (batch_id, seq) WHERE batch_id IS NOT NULL;
CREATE INDEX events_agent ON events (organization_id, agent_id, seq);
"""
