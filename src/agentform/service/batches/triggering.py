"""Triggering one due item: the execute rules again, then an execution, or why not.

An item was checked when its batch was created, but the organization may have
changed since: its pool emptied or deleted, its version removed, a staged file
gone. So at its turn it is checked again with the same execute rules; an item
whose execute would fail now becomes `failed` with the reason. One whose pool
is only busy (every profile in use) keeps waiting.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...rules.execute import check_execute_request, parse_execute_request
from ...rules.problems import RuleViolation
from ..db import Conn
from ..executions.capacity import slot_for_request
from ..executions.lifecycle import AgentToRun, agent_to_run, create_execution
from ..store import execution_capacity
from ..store.batches import WaitingItem
from ..store.executions import OrganizationData


@dataclass(frozen=True)
class Outcome:
    execution_id: str | None = None
    failure: str | None = None

    @property
    def waits(self) -> bool:
        return self.execution_id is None and self.failure is None


WAITS = Outcome()


def free_capacity(conn: Conn, org_id: str) -> int:
    """How many more executions the organization may start now."""
    limit = execution_capacity.capacity(conn, org_id)
    return max(0, limit - execution_capacity.active_count(conn, org_id))


class Trigger:
    """Triggers items of one organization within one transaction (agents read once)."""

    def __init__(self, conn: Conn, org_id: str) -> None:
        self.conn = conn
        self.org_id = org_id
        self.lookup = OrganizationData(conn, org_id)
        self._agents: dict[str, AgentToRun] = {}

    def _agent(self, agent_id: str) -> AgentToRun:
        if agent_id not in self._agents:
            self._agents[agent_id] = agent_to_run(self.conn, self.org_id, agent_id)
        return self._agents[agent_id]

    def __call__(self, item: WaitingItem) -> Outcome:
        try:
            request = parse_execute_request(item.request)
        except RuleViolation as exc:  # stored requests were valid: only a newer rule gets here
            return Outcome(failure=str(exc))
        agent = self._agent(item.agent_id)
        problems = check_execute_request(request, agent.versions_rule, self.lookup)
        if problems:
            return Outcome(failure="; ".join(str(p) for p in problems))
        slot = slot_for_request(self.conn, self.org_id, request)
        if not slot.free:
            pool = request.agentProfilePoolId
            if pool is not None and not execution_capacity.pool_members(self.conn, str(pool)):
                return Outcome(failure=f"agentProfilePoolId: the pool has no profiles ({slot.why})")
            return WAITS
        row = create_execution(self.conn, agent, request, created_by=None, batch_id=item.batch_id)
        return Outcome(execution_id=str(row["id"]))
