"""008: operating deliveries: every attempt of a delivery, and each integration's health.

`webhook_attempts` keeps what each attempt of a delivery saw (when, the answer's
status and first bytes, how long it took); `webhook_health` counts an
integration's consecutive failed deliveries and says since when it is
failing. Both go with their delivery or integration (the foreign keys cascade).
A table of its own for health, rather than columns of `webhook_integrations`,
so the integration rows (and the code writing them) stay as they are.
"""

SQL = """
CREATE TABLE webhook_attempts (
    delivery_id TEXT NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
    number INTEGER NOT NULL,
    attempted_at TEXT NOT NULL,
    response_status INTEGER,
    duration_ms INTEGER NOT NULL,
    error TEXT,
    response_head TEXT,  -- the answer's first bytes, as text (at most 256 characters)
    PRIMARY KEY (delivery_id, number)
);
CREATE TABLE webhook_health (
    integration_id TEXT PRIMARY KEY REFERENCES webhook_integrations(id) ON DELETE CASCADE,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,  -- deliveries that ended `failed`
    failing_since TEXT,  -- set at the threshold, cleared by a successful attempt
    paused_until TEXT  -- after a failed attempt: no attempt of the integration before it
);
CREATE INDEX webhook_deliveries_by_status
    ON webhook_deliveries (organization_id, status, created_at, id);
"""
