"""011: each organization's count of executions holding capacity, kept by triggers.

Whether one more execution may start was a `count(*)` over the organization's
active executions, paid by every execute and every batch item, and growing with
them. The count is now a row per organization that SQLite keeps in the same
transaction as every insert, status change or delete of an execution, whoever
writes it (the service, a tool, a cascade), so it is exact at every commit and
across a crash. The statuses are those of `execution_status.ACTIVE`;
tests/service/test_execution_properties.py compares the count with `count(*)`
after every call of its interleavings.
"""

_ACTIVE = "('starting', 'running', 'paused', 'awaiting_confirmation')"

_ENTER = """BEGIN
    INSERT INTO execution_active_counts (organization_id, active) VALUES (NEW.organization_id, 1)
    ON CONFLICT (organization_id) DO UPDATE SET active = active + 1;
END;"""
_LEAVE = """BEGIN
    UPDATE execution_active_counts SET active = active - 1
    WHERE organization_id = OLD.organization_id;
END;"""

SQL = f"""
CREATE TABLE execution_active_counts (
    organization_id TEXT PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
    active INTEGER NOT NULL CHECK (active >= 0)
) WITHOUT ROWID;
INSERT INTO execution_active_counts (organization_id, active)
SELECT organization_id, count(*) FROM executions
WHERE status IN {_ACTIVE} GROUP BY organization_id;
CREATE TRIGGER executions_active_insert AFTER INSERT ON executions
WHEN NEW.status IN {_ACTIVE}
{_ENTER}
CREATE TRIGGER executions_active_enter AFTER UPDATE OF status ON executions
WHEN NEW.status IN {_ACTIVE} AND OLD.status NOT IN {_ACTIVE}
{_ENTER}
CREATE TRIGGER executions_active_leave AFTER UPDATE OF status ON executions
WHEN OLD.status IN {_ACTIVE} AND NEW.status NOT IN {_ACTIVE}
{_LEAVE}
CREATE TRIGGER executions_active_delete AFTER DELETE ON executions
WHEN OLD.status IN {_ACTIVE}
{_LEAVE}
"""
