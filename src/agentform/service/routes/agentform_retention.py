"""agentform's own retention operation (not the Agent Service API), under /agentform/v1:

- `POST /prune`: `{"olderThan": "30d"}` forgets the caller's organization's finished
  history older than that, now (store/retention.py says what, and what never):
  answers how many rows of each kind went, `{olderThan, before, deleted: {deliveries,
  routingDecisions, events, executions}}`. An admin key. `agentform service prune
  --older-than AGE` calls it; the service's own retention (`service run --retain`)
  does the same for every organization, on its clock.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field

from agentform.rules.clock import MAX_TEXT, ClockWordsError, parse_duration
from agentform.service.errors import bad_request
from agentform.service.http.auth import Caller, caller
from agentform.service.http.gate import agentform_router
from agentform.service.store.database import iso
from agentform.service.upkeep.retention import prune_now

router = agentform_router(tags=["agentform"])


class PruneRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    olderThan: Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]


@router.post("/prune")
async def prune(body: PruneRequest, request: Request, who: Caller = Depends(caller)) -> Any:
    try:
        seconds = parse_duration(body.olderThan)
    except ClockWordsError as exc:
        raise bad_request([("olderThan", str(exc))]) from None
    before = request.app.state.clock.now() - timedelta(seconds=seconds)
    deleted = await run_in_threadpool(prune_now, request.app.state.db, before, who.organization_id)
    return {"olderThan": body.olderThan, "before": iso(before), "deleted": deleted}
