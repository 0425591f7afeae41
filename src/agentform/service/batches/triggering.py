"""Triggering one due item: the execute rules again, then an execution, or why not.

An item was checked when its batch was created, but the organization may have
changed since: its pool emptied or deleted, its version removed, a staged file
gone. So at its turn it is checked again with the same execute rules; an item
whose execute would fail now becomes `failed` with the reason. One whose pool
is only busy (every profile in use) keeps waiting.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentform.core.problems import RuleViolation
from agentform.rules.batches import CachedLookup
from agentform.rules.execute import check_execute_request, parse_execute_request
from agentform.service.executions.lifecycle import (
    AgentToRun,
    AtCapacity,
    agent_to_run,
    create_execution,
)
from agentform.service.store import execution_capacity
from agentform.service.store.batch_items import WaitingItem
from agentform.service.store.database import Conn
from agentform.service.store.executions import OrganizationData


@dataclass(frozen=True)
class Outcome:
    execution_id: str | None = None
    failure: str | None = None
    full: bool = False  # the organization has no capacity left: stop trying

    @property
    def waits(self) -> bool:
        return self.execution_id is None and self.failure is None


WAITS = Outcome()
FULL = Outcome(full=True)
NO_PROFILES = "agentProfilePoolId: the pool has no profiles, so no execution can take one"


class Trigger:
    """Triggers items of one organization within one transaction (agents, pools and
    profiles read once)."""

    def __init__(self, conn: Conn, org_id: str) -> None:
        self.conn = conn
        self.org_id = org_id
        self.lookup = CachedLookup(OrganizationData(conn, org_id))
        self._agents: dict[str, AgentToRun] = {}

    def _agent(self, agent_id: str) -> AgentToRun:
        if agent_id not in self._agents:
            self._agents[agent_id] = agent_to_run(self.conn, self.org_id, agent_id)
        return self._agents[agent_id]

    def __call__(self, item: WaitingItem, room: int) -> Outcome:
        """Triggers `item` (the organization may start `room` more executions: known,
        not counted again)."""
        try:
            request = parse_execute_request(item.request)
        except RuleViolation as exc:  # stored requests were valid: only a newer rule gets here
            return Outcome(failure=str(exc))
        agent = self._agent(item.agent_id)
        problems = check_execute_request(request, agent.versions_rule, self.lookup)
        if problems:
            return Outcome(failure="; ".join(str(p) for p in problems))
        try:
            row = create_execution(
                self.conn, agent, request, created_by=None, batch_id=item.batch_id, room=room
            )
        except AtCapacity:  # nothing was written
            pool = request.agentProfilePoolId
            if pool is not None and not execution_capacity.pool_members(self.conn, str(pool)):
                return Outcome(failure=NO_PROFILES)
            if execution_capacity.room(self.conn, self.org_id) == 0:
                return FULL
            return WAITS  # its pool's profiles are all in use: it keeps its place
        return Outcome(execution_id=str(row.id))
