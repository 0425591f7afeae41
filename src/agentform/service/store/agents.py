"""Agents: read through the API (docs/service/contract.md#agents-and-profiles), created
by the seed file."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from agentform.service.models.agents import Agent
from agentform.service.models.pages import Page
from agentform.service.store.common import fetch_owned, stored_json
from agentform.service.store.database import Conn
from agentform.service.store.organizations import service_user_id
from agentform.service.store.pages import PageRequest, read_page


def agent_from_row(row: sqlite3.Row) -> Agent:
    return Agent(
        id=row["id"],
        name=row["name"],
        organizationId=row["organization_id"],
        userId=service_user_id(row["organization_id"]),
        publishedVersion=row["published_version"],
        versions=stored_json(row["versions"]),
        createdAt=row["created_at"],
        updatedAt=row["updated_at"],
    )


def list_agents(conn: Conn, org_id: str, request: PageRequest) -> Page[Agent]:
    return read_page(conn, "agents", "organization_id = ?", [org_id], request, agent_from_row)


def get_agent(conn: Conn, org_id: str, agent_id: object) -> Agent:
    """The organization's agent, else 404."""
    return agent_from_row(fetch_owned(conn, "agents", agent_id, org_id, "agent"))


def agent_name(conn: Conn, agent_id: str) -> str:
    """The agent's name, or "" when it is gone (its notifications still go out)."""
    row = conn.execute("SELECT name FROM agents WHERE id = ?", (agent_id,)).fetchone()
    return str(row[0]) if row else ""


def ensure_agent(
    conn: Conn,
    agent_id: str,
    org_id: str,
    name: str,
    published_version: int,
    versions: Sequence[int],
    created_at: str,
) -> None:
    """Adds the agent unless the organization has one of that name."""
    conn.execute(
        "INSERT OR IGNORE INTO agents VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            agent_id,
            org_id,
            name,
            published_version,
            json.dumps(list(versions)),
            created_at,
            created_at,
        ),
    )
