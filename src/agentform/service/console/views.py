"""What an execution's page shows, read once for the console and for `agentform
test --html` (testing/pages.py): the execution, its events, each webhook's routing
decision per event, its deliveries with their attempts, within one organization.
"""

from __future__ import annotations

from typing import Any

from agentform.service.store import console_reads as reads
from agentform.service.store import delivery_history, executions, routing
from agentform.service.store.database import Conn
from agentform.service.store.delivery_history import DeliveryFilter

MAX_EVENTS = 1000


def execution_view(conn: Conn, org_id: str, execution_id: str) -> dict[str, Any]:
    """The organization's execution (else a 404 ServiceError) as its page shows it."""
    execution = executions.get(conn, org_id, execution_id)
    events = routing.events_of_execution(conn, org_id, execution.id, MAX_EVENTS + 1)
    decisions = routing.decisions_of_execution(conn, org_id, execution.id)
    deliveries = delivery_history.list_with_attempts(
        conn, DeliveryFilter(org_id, execution_id=execution.id)
    )
    names = {i.id: i.name for i in reads.integrations(conn, org_id)}
    by_event: dict[str, list[routing.RoutingDecision]] = {}
    unsent: dict[str, int] = {}
    for decision in decisions:
        by_event.setdefault(decision.event_id, []).append(decision)
        if not decision.wanted:
            unsent[decision.integration_name] = unsent.get(decision.integration_name, 0) + 1
    return {
        "sent": [d for d in decisions if d.wanted],
        "unsent": sorted(unsent.items()),
        "execution": execution,
        "events": events[:MAX_EVENTS],
        "more_events": len(events) > MAX_EVENTS,
        "decisions": by_event,
        "deliveries": deliveries,
        "integration_names": names,
    }
