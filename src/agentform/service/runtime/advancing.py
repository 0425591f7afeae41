"""Moving a service's manual clock: by a duration, or until a condition holds.

`advance(services, seconds=...)` moves the clock on, running everything that falls
due on the way (`ManualClock.advance`). `advance(services, until=condition,
within=...)` moves it moment by moment (`ManualClock.step`: to the next instant
work falls due, running that work) and checks the condition after each, stopping
as soon as it holds; when it does not within `within`, time stands at the end of
that window and the result says `met=False`. Nothing sleeps for real.

`services` is what the app keeps in `app.state` (`db`, `clock`): the route
`POST /agentform/v1/clock/advance` (routes/agentform_clock.py) and `agentform
test` call this. The words (`parse_duration`, `parse_condition`) are
`rules.clock`'s, re-exported here.
"""

from __future__ import annotations

import asyncio
import weakref
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from agentform.rules.clock import (
    DEFAULT_WITHIN,
    MAX_DURATION,
    ClockWordsError,
    Condition,
    parse_condition,
    parse_duration,
)
from agentform.service.clock import Clock, ManualClock
from agentform.service.store import conditions
from agentform.service.store.database import Database, iso

__all__ = [
    "DEFAULT_WITHIN",
    "AdvanceResult",
    "ClockWordsError",
    "Condition",
    "NotManualClock",
    "NothingToWaitFor",
    "Services",
    "advance",
    "parse_condition",
    "parse_duration",
    "subject_status",
]


class Services(Protocol):
    """What advancing needs of a service: its database and clock (`app.state` has both)."""

    db: Database
    clock: Clock


class NotManualClock(ClockWordsError):
    """The service runs on the wall clock: its time cannot be moved."""


class NothingToWaitFor(ClockWordsError):
    """The condition names a batch or execution the organization does not have: as
    `kubectl wait` on a missing object, refused before the clock moves (a manual clock
    never goes back, so a misspelt name would otherwise cost the whole window)."""


@dataclass(frozen=True)
class AdvanceResult:
    now: datetime
    advanced: float
    """Seconds the clock moved."""
    until: Condition | None = None
    met: bool | None = None
    """Whether `until` held when the clock stopped (None: there was no condition)."""
    status: str | None = None
    """The status of the condition's subject when the clock stopped (None: no such subject)."""

    def as_json(self) -> dict[str, object]:
        return {
            "now": iso(self.now),
            "advancedSeconds": self.advanced,
            "until": None if self.until is None else str(self.until),
            "met": self.met,
            "status": self.status,
        }


_moving: weakref.WeakKeyDictionary[ManualClock, asyncio.Lock] = weakref.WeakKeyDictionary()


def manual_clock(services: Services) -> ManualClock:
    clock = services.clock
    if not isinstance(clock, ManualClock):
        raise NotManualClock("the service runs on the wall clock: its time cannot be moved")
    return clock


async def advance(
    services: Services,
    *,
    seconds: float | None = None,
    until: Condition | None = None,
    within: float = DEFAULT_WITHIN,
    organization_id: str | None = None,
) -> AdvanceResult:
    """Moves the manual clock by `seconds`, or until `until` holds (at most `within`
    seconds). `organization_id` limits whose batches and executions the condition
    names (None: any organization's). One advance at a time per clock."""
    clock = manual_clock(services)
    if (seconds is None) == (until is None):
        raise ClockWordsError("say how far to move the clock: a duration or a condition")
    for amount in (seconds, within):
        if amount is not None and not 0 <= amount <= MAX_DURATION:
            raise ClockWordsError(f"{amount:g} s is not between 0 and {MAX_DURATION:g} s")
    lock = _moving.setdefault(clock, asyncio.Lock())
    async with lock:
        start = clock.now()
        if until is None:
            assert seconds is not None
            await clock.advance(seconds)
            return AdvanceResult(clock.now(), _since(start, clock))
        status = await _advance_until(services.db, clock, until, within, organization_id)
        return AdvanceResult(
            clock.now(), _since(start, clock), until, until.accepts(status), status
        )


def _since(start: datetime, clock: Clock) -> float:
    return (clock.now() - start).total_seconds()


async def _advance_until(
    db: Database, clock: ManualClock, until: Condition, within: float, org: str | None
) -> str | None:
    """Steps the clock until the condition holds or `within` has passed; returns the
    subject's status at the end."""
    limit = clock.now() + timedelta(seconds=within)
    if await asyncio.to_thread(subject_status, db, until, org) is None:
        kind = "batch" if until.kind == "batches" else "execution"
        raise NothingToWaitFor(
            f"no {kind} '{'/'.join(until.key)}' in this organization: nothing to wait for "
            "(the clock did not move)"
        )
    await clock.advance(0)  # what is due now runs first
    status = await asyncio.to_thread(subject_status, db, until, org)
    while not until.accepts(status):
        if not await clock.step(limit):
            await clock.advance((limit - clock.now()).total_seconds())
            return await asyncio.to_thread(subject_status, db, until, org)
        status = await asyncio.to_thread(subject_status, db, until, org)
    return status


def subject_status(db: Database, condition: Condition, organization_id: str | None) -> str | None:
    """The current status of the execution or batch a condition names (None: none yet)."""
    with db.read() as conn:
        if condition.kind == "executions":
            return conditions.execution_status(conn, condition.key[0], organization_id)
        agent, name = condition.key
        return conditions.batch_status(conn, agent, name, organization_id)
