"""009: indexes that let retention find old rows without reading every row
(store/retention.py): each of its short transactions walks one index from the
oldest row and stops at its batch, whatever the size of the table."""

SQL = """
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (updated_at)
    WHERE status <> 'pending';
CREATE INDEX routing_decisions_created ON routing_decisions (created_at);
CREATE INDEX events_created ON events (created_at);
CREATE INDEX executions_terminal ON executions (terminal_at) WHERE terminal_at IS NOT NULL;
"""
