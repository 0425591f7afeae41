"""003: executions, the files they produce, staged files, agent scripts and execution capacity.

`agent_scripts` holds each agent's seed `script` (JSON; no row: no script) and
`execution_capacity` each organization's maximum of concurrent executions (no
row: 10). Executions keep their compiled program and where they are in it, so
a restarted service carries on. `service_secrets` keeps what signs presigned
file links.
"""

SQL = """
CREATE TABLE agent_scripts (
    agent_id TEXT PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    script TEXT NOT NULL
);
CREATE TABLE execution_capacity (
    organization_id TEXT PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
    max_concurrent INTEGER NOT NULL CHECK (max_concurrent >= 1)
);
CREATE TABLE executions (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    agent_name TEXT NOT NULL,
    version INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'starting', 'running', 'paused',
        'awaiting_confirmation', 'completed', 'failed', 'cancelled')),
    inputs TEXT NOT NULL,
    metadata TEXT NOT NULL,
    request TEXT NOT NULL,
    program TEXT NOT NULL,
    pc INTEGER NOT NULL DEFAULT 0,
    wake_at TEXT,
    remaining REAL,
    agent_profile_id TEXT,
    agent_profile_pool_id TEXT,
    temp_files TEXT NOT NULL DEFAULT '[]',
    batch_id TEXT,
    soft_timeout_mins REAL,
    result TEXT,
    failure_reason TEXT,
    paused_by TEXT,
    cancelled_by TEXT,
    created_by TEXT,
    created_at TEXT NOT NULL,
    started_at TEXT,
    terminal_at TEXT,
    updated_at TEXT NOT NULL
);
CREATE INDEX executions_order ON executions (organization_id, created_at, id);
CREATE INDEX executions_status ON executions (organization_id, status);
CREATE INDEX executions_agent ON executions (organization_id, agent_id, created_at, id);
CREATE INDEX executions_batch ON executions (batch_id) WHERE batch_id IS NOT NULL;
CREATE INDEX executions_profile ON executions (agent_profile_id)
    WHERE agent_profile_id IS NOT NULL;
CREATE TABLE execution_files (
    id TEXT PRIMARY KEY,
    execution_id TEXT NOT NULL REFERENCES executions(id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    mime_type TEXT NOT NULL,
    source TEXT NOT NULL,
    size INTEGER NOT NULL,
    content BLOB NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE temp_files (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    size INTEGER NOT NULL,
    content BLOB NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE service_secrets (
    name TEXT PRIMARY KEY,
    value BLOB NOT NULL
);
"""
