"""What a clock condition (`batches/AGENT/NAME is completed`) reads: the current
status of the execution or batch it names, optionally within one organization."""

from __future__ import annotations

from agentform.service.store.database import Conn


def _in_organization(organization_id: str | None) -> tuple[str, tuple[str, ...]]:
    if organization_id is None:
        return "", ()
    return " AND organization_id = ?", (organization_id,)


def execution_status(conn: Conn, execution_id: str, organization_id: str | None) -> str | None:
    where, args = _in_organization(organization_id)
    row = conn.execute(
        f"SELECT status FROM executions WHERE id = ?{where}", (execution_id, *args)
    ).fetchone()
    return None if row is None else str(row[0])


def batch_status(conn: Conn, agent: str, name: str, organization_id: str | None) -> str | None:
    """The status of the newest batch named `name` of the agent named (or with id) `agent`."""
    where, args = _in_organization(organization_id)
    row = conn.execute(
        "SELECT status FROM execution_batches WHERE name = ? AND agent_id IN "
        f"(SELECT id FROM agents WHERE (name = ? OR id = ?){where}) "
        "ORDER BY created_at DESC, rowid DESC LIMIT 1",
        (name, agent, agent, *args),
    ).fetchone()
    return None if row is None else str(row[0])
