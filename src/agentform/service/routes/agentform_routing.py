"""agentform's own routing explanation (not the Agent Service API), under /agentform/v1:

`GET /executions/{id}/routing`: for each event of the caller's execution, and each
attachment of its agent at the time, whether a notification was sent and the
setting that decided it (store/routing.py), with what became of the delivery.
Another organization's execution is 404, as an unknown one.
"""

from __future__ import annotations

from typing import Any

from fastapi import Depends

from agentform.service.http.auth import Caller, caller, database
from agentform.service.http.gate import agentform_router
from agentform.service.store import routing
from agentform.service.store.database import Database
from agentform.service.store.executions import owned_row

router = agentform_router(tags=["agentform"])


def _explain(db: Database, org_id: str, execution_id: str) -> dict[str, Any]:
    with db.read() as conn:
        row = owned_row(conn, org_id, execution_id)
        # One more than shown, to know whether there were more.
        events = routing.events_of_execution(conn, org_id, row.id, routing.MAX_DECISIONS + 1)
        decisions = routing.decisions_of_execution(conn, org_id, row.id)
    by_event: dict[str, list[dict[str, object]]] = {}
    for decision in decisions:
        by_event.setdefault(decision.event_id, []).append(decision.as_json())
    shown = events[: routing.MAX_DECISIONS]
    return {
        "executionId": row.id,
        "status": row.status,
        "events": [
            {
                "eventId": e.id,
                "event": e.event,
                "at": e.created_at,
                "decisions": by_event.get(e.id, []),
            }
            for e in shown
        ],
        "truncated": len(shown) < len(events) or len(decisions) >= routing.MAX_DECISIONS,
    }


@router.get("/executions/{executionId}/routing")
def explain_routing(
    executionId: str, who: Caller = Depends(caller), db: Database = Depends(database)
) -> dict[str, Any]:
    return _explain(db, who.organization_id, executionId[:200])
