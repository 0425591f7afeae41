"""Agents, read-only through the API (docs/service/contract.md#agents-and-profiles);
created by the seed file."""

from __future__ import annotations

import uuid

from fastapi import Depends

from agentform.service.http.auth import Caller, caller, database
from agentform.service.http.gate import api_router
from agentform.service.http.paging import ListQuery, Page, agent_list_query
from agentform.service.models.agents import Agent
from agentform.service.store import agents
from agentform.service.store.database import Database

router = api_router(tags=["Agents"])


@router.get("/agents", response_model=Page[Agent])
def list_agents(query: ListQuery = Depends(agent_list_query)) -> Page[Agent]:
    with query.db.read() as conn:
        return agents.list_agents(conn, query.who.organization_id, query.request)


@router.get("/agents/{agentId}", response_model=Agent)
def get_agent(
    agentId: uuid.UUID, who: Caller = Depends(caller), db: Database = Depends(database)
) -> Agent:
    with db.read() as conn:
        return agents.get_agent(conn, who.organization_id, agentId)
