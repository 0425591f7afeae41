"""agentform's own clock operations (not the Agent Service API), under /agentform/v1:

- `GET /clock`: the service's time and the kind of its clock (`manual` or `wall`);
  any key.
- `POST /clock/advance`: moves a manual clock by `{"duration": "2m"}`, or
  `{"until": "batches/AGENT/NAME is completed", "within": "1d"}`, running the work
  that falls due (runtime/advancing.py); answers the AdvanceResult. An admin key
  (any organization's: the clock is the whole service's). On the wall clock it is
  404: there is no clock to move. A condition names the caller's organization's
  executions and batches only.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request
from pydantic import BaseModel, ConfigDict, Field

from agentform.rules.clock import MAX_TEXT, ClockWordsError, parse_condition, parse_duration
from agentform.service.clock import ManualClock
from agentform.service.errors import ServiceError, bad_request
from agentform.service.http.auth import Caller, caller
from agentform.service.http.gate import agentform_router
from agentform.service.runtime.advancing import DEFAULT_WITHIN, NothingToWaitFor, advance
from agentform.service.store.database import iso

router = agentform_router(tags=["agentform"])

NOT_MANUAL = (
    "this service runs on the wall clock, which cannot be moved; "
    "a service started with `agentform service run --clock manual` can"
)

Words = Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]


class AdvanceRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    duration: Words | None = None
    until: Words | None = None
    within: Words | None = None


@router.get("/clock")
async def read_clock(request: Request, who: Caller = Depends(caller)) -> dict[str, Any]:
    clock = request.app.state.clock
    kind = "manual" if isinstance(clock, ManualClock) else "wall"
    return {"now": iso(clock.now()), "kind": kind}


def _read(field: str, text: str | None, parse: Any) -> Any:
    try:
        return None if text is None else parse(text)
    except ClockWordsError as exc:
        raise bad_request([(field, str(exc))]) from None


@router.post("/clock/advance")
async def advance_clock(
    body: AdvanceRequest, request: Request, who: Caller = Depends(caller)
) -> dict[str, Any]:
    if not isinstance(request.app.state.clock, ManualClock):
        raise ServiceError(404, NOT_MANUAL)
    if (body.duration is None) == (body.until is None):
        raise bad_request([("body", "give either duration or until")])
    if body.within is not None and body.until is None:
        raise bad_request([("within", "goes with until")])
    seconds = _read("duration", body.duration, parse_duration)
    until = _read("until", body.until, parse_condition)
    within = _read("within", body.within, parse_duration)
    try:
        result = await advance(
            request.app.state,
            seconds=seconds,
            until=until,
            within=DEFAULT_WITHIN if within is None else within,
            organization_id=who.organization_id,
        )
    except NothingToWaitFor as exc:
        raise ServiceError(404, str(exc)) from None
    return result.as_json()
