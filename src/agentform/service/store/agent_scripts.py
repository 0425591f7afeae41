"""Agents' scripts (the seed's `script` of an agent): what its executions do.

The seed file is their only source: loading it again replaces an agent's
script, or removes it when the seed has none. The store keeps a script as the
JSON text of its model; reading it into the model is the executions' part.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentform.service.errors import not_found
from agentform.service.store.common import stored_json
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


@dataclass(frozen=True)
class StoredAgent:
    """An agent as an execution needs it, as stored: its script still JSON text. Equal
    rows are equal values, so what is made from one can be cached under it."""

    id: str
    organization_id: str
    name: str
    published_version: int
    versions: tuple[int, ...]
    script: str | None


def stored_agent(conn: Conn, org_id: str, agent_id: object) -> StoredAgent:
    """The organization's agent with its script (one query), else 404."""
    found = conn.execute(
        "SELECT a.id, a.name, a.published_version, a.versions, s.script FROM agents a"
        " LEFT JOIN agent_scripts s ON s.agent_id = a.id WHERE a.id = ? AND a.organization_id = ?",
        (str(agent_id), org_id),
    ).fetchone()
    if found is None:
        raise not_found("agent")
    versions = tuple(stored_json(found[3]))
    return StoredAgent(found[0], org_id, found[1], found[2], versions, found[4])
