"""Agents' scripts (the seed's `script` of an agent): what its executions do.

The seed file is their only source: loading it again replaces an agent's
script, or removes it when the seed has none. The store keeps a script as the
JSON text of its model; reading it into the model is the executions' part.
"""

from __future__ import annotations

from agentform.service.store.database import Conn


def set_agent_script(conn: Conn, org_id: str, agent_name: str, script: str | None) -> None:
    """The seed's script of the agent (the seed is its only source: loading it again
    replaces the script, or removes it when the seed has none)."""
    found = conn.execute(
        "SELECT id FROM agents WHERE organization_id = ? AND name = ?", (org_id, agent_name)
    ).fetchone()
    if found is None:
        return
    if script is None:
        conn.execute("DELETE FROM agent_scripts WHERE agent_id = ?", (found[0],))
        return
    conn.execute(
        "INSERT INTO agent_scripts VALUES (?, ?) ON CONFLICT (agent_id)"
        " DO UPDATE SET script = excluded.script",
        (found[0], script),
    )


def agent_script(conn: Conn, agent_id: str) -> str | None:
    """The JSON text of the agent's script, None when it has none."""
    found = conn.execute(
        "SELECT script FROM agent_scripts WHERE agent_id = ?", (agent_id,)
    ).fetchone()
    return str(found[0]) if found else None
