"""Agents, read-only through the API (API.md §5); created by the seed file."""

from __future__ import annotations

import json
import sqlite3
import uuid

from fastapi import APIRouter, Depends

from ..auth import Caller, caller, database
from ..db import Database
from ..models import Agent
from ..paging import ListQuery, Page, agent_list_query, list_page
from .common import fetch_owned

router = APIRouter(tags=["Agents"])


def agent_from_row(row: sqlite3.Row) -> Agent:
    return Agent(
        id=row["id"],
        name=row["name"],
        organizationId=row["organization_id"],
        publishedVersion=row["published_version"],
        versions=json.loads(row["versions"]),
        createdAt=row["created_at"],
        updatedAt=row["updated_at"],
    )


@router.get("/agents", response_model=Page[Agent])
def list_agents(
    query: ListQuery = Depends(agent_list_query), db: Database = Depends(database)
) -> Page[Agent]:
    with db.read() as conn:
        return list_page(
            db,
            conn,
            "agents",
            "organization_id = ?",
            [query.who.organization_id],
            query,
            agent_from_row,
        )


@router.get("/agents/{agentId}", response_model=Agent)
def get_agent(
    agentId: uuid.UUID, who: Caller = Depends(caller), db: Database = Depends(database)
) -> Agent:
    with db.read() as conn:
        row = fetch_owned(conn, "agents", agentId, who.organization_id, "agent")
    return agent_from_row(row)
