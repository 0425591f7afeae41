"""010: what the console's lists read fast (docs/guide/console.md#speed).

Executions are listed newest first within a status or a pool, and deliveries
newest first within the organization or an execution, without sorting the
organization's rows. An execution's metadata is also kept a row per key in
`execution_metadata` (written with the execution, which never changes it), so a
`key=value` filter is an index lookup instead of reading every execution's JSON.
"""

BACKFILL = """
INSERT OR IGNORE INTO execution_metadata (execution_id, organization_id, key, value, created_at)
SELECT e.id, e.organization_id, m.key, m.value, e.created_at
FROM executions e, json_each(e.metadata) m
WHERE json_valid(e.metadata) AND m.type = 'text';
"""
"""Every execution's metadata, a row per key (also what bench/console.py runs after
writing its executions straight into the table)."""

SQL = (
    """
CREATE INDEX webhook_deliveries_execution
    ON webhook_deliveries (execution_id, created_at, id) WHERE execution_id IS NOT NULL;
CREATE INDEX webhook_deliveries_org_order
    ON webhook_deliveries (organization_id, created_at, id);
CREATE INDEX executions_status_order ON executions (organization_id, status, created_at, id);
CREATE INDEX executions_pool_order
    ON executions (organization_id, agent_profile_pool_id, created_at, id)
    WHERE agent_profile_pool_id IS NOT NULL;
CREATE TABLE execution_metadata (
    execution_id TEXT NOT NULL REFERENCES executions(id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    created_at TEXT NOT NULL,  -- the execution's: the filter's rows come in list order
    PRIMARY KEY (execution_id, key)
) WITHOUT ROWID;
CREATE INDEX execution_metadata_lookup
    ON execution_metadata (organization_id, key, value, created_at, execution_id);
"""
    + BACKFILL
)
