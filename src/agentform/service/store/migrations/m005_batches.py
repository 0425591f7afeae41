"""005: execution batches and their items (docs/service/contract.md#execution-batches).

A batch keeps its counters (kept equal to its items' statuses in every
transaction that moves an item) and its schedule: `schedule_origin` (when the
first slice falls due: `startAt`, moved on by pauses), `released_count` (items
`0 .. n-1` have fallen due) and `paused_at`. An item keeps its request as
created, and the pool it names, so deleting a pool a live batch needs is 409.
"""

SQL = """
CREATE TABLE execution_batches (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    status TEXT NOT NULL
        CHECK (status IN ('pending', 'running', 'paused', 'completed', 'cancelled')),
    batch_size INTEGER NOT NULL,
    batch_interval INTEGER NOT NULL,
    concurrency_group_id TEXT NOT NULL,
    start_at TEXT NOT NULL,
    schedule_origin TEXT NOT NULL,
    paused_at TEXT,
    released_count INTEGER NOT NULL DEFAULT 0,
    started_at TEXT,
    total_count INTEGER NOT NULL,
    pending_count INTEGER NOT NULL,
    awaiting_capacity_count INTEGER NOT NULL DEFAULT 0,
    triggered_count INTEGER NOT NULL DEFAULT 0,
    cancelled_count INTEGER NOT NULL DEFAULT 0,
    failed_count INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    CHECK (pending_count + awaiting_capacity_count + triggered_count + cancelled_count
           + failed_count = total_count)
);
-- A name is taken per (organization, agent) by the batches that are not cancelled.
CREATE UNIQUE INDEX execution_batches_live_name
    ON execution_batches (organization_id, agent_id, name) WHERE status != 'cancelled';
CREATE INDEX execution_batches_order ON execution_batches (organization_id, created_at, id);
CREATE INDEX execution_batches_group
    ON execution_batches (organization_id, concurrency_group_id);

-- An item's `id` is answered, never looked up: it has no index, so that the 10,000
-- rows of a batch go in without a random-order b-tree insert each. Its key is
-- (batch_id, idx); the scheduler addresses it by rowid.
CREATE TABLE execution_batch_items (
    id TEXT NOT NULL,
    batch_id TEXT NOT NULL REFERENCES execution_batches(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN
        ('pending', 'awaiting_capacity', 'batch_paused', 'triggered', 'cancelled', 'failed')),
    request TEXT NOT NULL,
    pool_id TEXT,
    due_at TEXT,
    execution_id TEXT,
    triggered_at TEXT,
    failure_reason TEXT,
    UNIQUE (batch_id, idx)
);
-- Items waiting for capacity, oldest due first, then as created (its rowid).
CREATE INDEX execution_batch_items_waiting ON execution_batch_items (due_at)
    WHERE status = 'awaiting_capacity';
CREATE INDEX execution_batch_items_pool ON execution_batch_items (pool_id)
    WHERE pool_id IS NOT NULL;
"""
