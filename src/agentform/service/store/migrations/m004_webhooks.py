"""004: webhooks: integrations, their attachments to agents, deliveries, signing keys.

An organization's signing key pair is made the first time it is needed (see
`store.webhooks.ensure_signing_key`), so organizations older than this step
need nothing here.

`IF NOT EXISTS`: builds of the main branch made these tables at start before
this step existed; their databases take the step without change.
"""

SQL = """
CREATE TABLE IF NOT EXISTS signing_keys (
    organization_id TEXT PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
    key_id TEXT NOT NULL,
    private_pem TEXT NOT NULL,
    public_pem TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS webhook_integrations (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    url TEXT NOT NULL,
    payload_version TEXT NOT NULL,
    headers TEXT NOT NULL,  -- JSON {name: value}: values leave only on a delivery's wire
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (organization_id, name)
);
CREATE INDEX IF NOT EXISTS webhook_integrations_order
    ON webhook_integrations (organization_id, created_at, id);
CREATE TABLE IF NOT EXISTS webhook_attachments (
    id TEXT NOT NULL UNIQUE,  -- internal: orders lists; the API names an attachment by its pair
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    integration_id TEXT NOT NULL REFERENCES webhook_integrations(id) ON DELETE CASCADE,
    settings TEXT NOT NULL,  -- JSON AttachmentSettings
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (agent_id, integration_id)
);
CREATE INDEX IF NOT EXISTS webhook_attachments_by_integration
    ON webhook_attachments (integration_id, created_at, id);
CREATE INDEX IF NOT EXISTS webhook_attachments_by_agent
    ON webhook_attachments (agent_id, created_at, id);
-- The outbox: one row per notification to send, written with the change that caused it.
CREATE TABLE IF NOT EXISTS webhook_deliveries (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    integration_id TEXT NOT NULL REFERENCES webhook_integrations(id) ON DELETE CASCADE,
    event TEXT NOT NULL,
    notification TEXT NOT NULL,  -- JSON envelope; each attempt sets its own event_id
    unwrap INTEGER NOT NULL,  -- send info.payload.result alone (unwrapResult)
    event_ref TEXT,  -- the events row it notifies of (none for EXECUTION_TEST)
    lane TEXT NOT NULL,  -- integration + execution (or batch): sent one at a time, in order
    execution_id TEXT,
    batch_id TEXT,
    event_id TEXT NOT NULL,  -- of the last attempt (before the first: the one it will use)
    status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    last_response_status INTEGER,
    last_error TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_event ON webhook_deliveries (event_ref);
CREATE INDEX IF NOT EXISTS webhook_deliveries_lane
    ON webhook_deliveries (lane, created_at, id) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS webhook_deliveries_order
    ON webhook_deliveries (integration_id, created_at, id);
"""
