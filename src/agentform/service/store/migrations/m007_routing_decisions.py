"""007: routing decisions: for each event, why each attachment of its agent got it or not.

One row per (event, attachment) the outbox weighed, written in the transaction that
records the event. A row goes with its integration (and organization): decisions are
kept exactly as long as the deliveries they explain.
"""

SQL = """
CREATE TABLE routing_decisions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    integration_id TEXT NOT NULL REFERENCES webhook_integrations(id) ON DELETE CASCADE,
    event_ref TEXT NOT NULL,  -- the events row weighed
    event TEXT NOT NULL,
    execution_id TEXT,
    batch_id TEXT,
    wanted INTEGER NOT NULL,
    rule TEXT NOT NULL,  -- the setting that decided: eventRules, metadataFilter.K, fieldFilters[i]
    reason TEXT NOT NULL,
    delivery_id TEXT,  -- the delivery written when wanted
    created_at TEXT NOT NULL
);
CREATE INDEX routing_decisions_execution
    ON routing_decisions (organization_id, execution_id, seq) WHERE execution_id IS NOT NULL;
CREATE INDEX routing_decisions_integration ON routing_decisions (integration_id);
"""
