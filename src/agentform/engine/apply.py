"""Executing a Plan: each change's calls in order, changes stage by stage (kind
levels: creates forward, cancels and deletes backward), the changes of a stage
concurrently (up to twice `parallelism` under way, at most `parallelism` requests
in flight: the client's ceiling). A failed change stops what depends on it;
independent work goes on. Ids created by earlier changes and sensitive values
from the workspace fill the calls' slots. Returns a report; progress goes through
hooks (the engine never prints). An `ApplyStop` interrupts it: first no new change
starts and those under way finish whole, then (`now()`) those are cancelled."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from agentform.api.concurrency import DEFAULT_PARALLELISM
from agentform.core.errors import AgentformError, ApiError
from agentform.engine.goals import earlier_attempt, reached
from agentform.engine.model import Change, Plan
from agentform.engine.order import stages
from agentform.engine.slots import fill
from agentform.engine.verdicts import Override
from agentform.kinds import Kind
from agentform.kinds.keys import Key

T = TypeVar("T")
Status = Literal["succeeded", "already in place", "failed", "not attempted"]
DONE: tuple[Status, ...] = ("succeeded", "already in place")


@dataclass
class ChangeResult:
    change: Change
    status: Status
    error: str | None = None
    calls_made: int = 0


@dataclass
class ApplyReport:
    results: list[ChangeResult] = field(default_factory=list)
    interrupted: bool = False
    overrides: tuple[Override, ...] = ()  # mandatory policies let pass, and why

    def count(self, status: Status) -> int:
        return sum(r.status == status for r in self.results)

    @property
    def ok(self) -> bool:
        return not self.interrupted and all(r.status in DONE for r in self.results)


class ApplyHooks(Protocol):
    def started(self, change: Change) -> None: ...
    def finished(self, result: ChangeResult) -> None: ...


class NoHooks:
    def started(self, change: Change) -> None:
        pass

    def finished(self, result: ChangeResult) -> None:
        pass


INTERRUPTED = "the apply was interrupted before it started"
CANCELLED = "the apply was interrupted while it ran; a next apply finishes it"


class ApplyStop:
    """Asks a running apply to stop (what the CLI's SIGINT / SIGTERM handler calls):
    `soon()` starts no new change and lets those under way finish; `now()` also
    cancels those under way. A change is under way once its first request has gone
    out: one still waiting for a request slot or the rate has done nothing, and is
    left for the next apply (with a rate limit, most started changes are waiting)."""

    def __init__(self) -> None:
        self.requested = False
        self.stopping = asyncio.Event()
        self.aborted = asyncio.Event()

    def soon(self) -> None:
        self.requested = True
        self.stopping.set()

    def now(self) -> None:
        self.soon()
        self.aborted.set()

    async def _must_end(self, under_way: asyncio.Event | None) -> None:
        """Returns at `now()`, or at `soon()` while nothing of the work has gone out."""
        await self.stopping.wait()
        if under_way is None or under_way.is_set():
            await self.aborted.wait()  # under way: only `now()` ends it

    async def unless_aborted(self, work: Awaitable[T], under_way: asyncio.Event | None = None) -> T:
        """`work`'s value; NotUnderWay when a stop comes before `under_way` is set (work
        cancelled: nothing of it went out), asyncio.CancelledError once `now()` is called."""
        task = asyncio.ensure_future(work)
        guard = asyncio.ensure_future(self._must_end(under_way))
        try:
            await asyncio.wait((task, guard), return_when=asyncio.FIRST_COMPLETED)
        finally:
            guard.cancel()
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            if under_way is not None and not under_way.is_set():
                raise NotUnderWay
            raise asyncio.CancelledError
        return task.result()


class NotUnderWay(AgentformError):
    """A change stopped before its first request went out."""


def sensitive_needed(plan: Plan) -> set[str]:
    return {
        s.sensitive for c in plan.changes for call in c.calls for s in call.slots if s.sensitive
    }


async def _execute(
    change: Change,
    api: Any,
    created: dict[str, str],
    values: Mapping[str, Any],
    sending: Callable[[], None],
) -> tuple[int, int]:
    """Makes the change's calls in order; returns how many were made, and how many
    failed with their goal found reached (goals.py). `sending` is called as each
    request goes out."""
    kind = Kind.registry[change.kind]
    key = Key.parse(change.key)
    made = in_place = 0
    for call in change.calls:
        path, body = fill(call, created, values)
        lookup = earlier_attempt(api, kind, key, call, path, body)
        try:
            answer = await api.request(
                call.method,
                path,
                json=body,
                lookup=lookup,
                idempotent=call.idempotent or None,
                sending=sending,
            )
            made += 1
        except ApiError as exc:
            goal = await reached(api, kind, key, call, path, body, exc)
            if goal is None:
                raise
            answer = goal.answer
            made, in_place = (made + 1, in_place) if goal.ours else (made, in_place + 1)
        if call.creates:
            created[change.id] = answer["id"]
    return made, in_place


async def apply_plan(
    plan: Plan,
    api: Any,
    parallelism: int = DEFAULT_PARALLELISM,
    hooks: ApplyHooks | None = None,
    values: Mapping[str, Any] | None = None,
    stop: ApplyStop | None = None,
) -> ApplyReport:
    """Executes `plan`; `values` holds the sensitive values its slots name (from
    `engine.sensitive.sensitive_values`): a missing one refuses before any write."""
    hooks = hooks or NoHooks()
    values = values or {}
    stop = stop or ApplyStop()
    _refuse_missing_values(plan, values)
    ordered = stages(plan.changes)
    loop = asyncio.get_running_loop()
    done: dict[str, asyncio.Future[ChangeResult]] = {
        c.id: loop.create_future() for stage in ordered for c in stage
    }
    created: dict[str, str] = {}
    # Changes under way: twice the requests in flight (the client's ceiling, also
    # `parallelism`), so that when an answer frees a request slot, the next change's
    # request is already waiting for it and goes out before that answer is worked on.
    working = asyncio.Semaphore(2 * max(1, parallelism))

    async def run(change: Change) -> ChangeResult:
        before = [await done[d] for d in change.dependsOn]
        blocked = [r.change.id for r in before if r.status not in DONE]
        if blocked:
            result = ChangeResult(
                change, "not attempted", f"depends on {', '.join(blocked)}, which did not succeed"
            )
        else:
            async with working:
                result = await _attempt(change, api, created, values, hooks, stop)
        done[change.id].set_result(result)
        hooks.finished(result)
        return result

    results: list[ChangeResult] = []
    for stage in ordered:
        results += await asyncio.gather(*(run(c) for c in stage))
    return ApplyReport(results, interrupted=stop.requested)


def _refuse_missing_values(plan: Plan, values: Mapping[str, Any]) -> None:
    """Before any write: the plan sends no sensitive value the workspace lacks."""
    missing = sorted(sensitive_needed(plan) - set(values))
    if missing:
        raise AgentformError(
            f"the workspace does not hold {', '.join(missing)}, which the plan sends; "
            "nothing was written"
        )


async def _attempt(
    change: Change,
    api: Any,
    created: dict[str, str],
    values: Mapping[str, Any],
    hooks: ApplyHooks,
    stop: ApplyStop,
) -> ChangeResult:
    """One change whose dependencies succeeded: its calls made, or why not."""
    if stop.requested:
        return ChangeResult(change, "not attempted", INTERRUPTED)
    hooks.started(change)
    under_way = asyncio.Event()  # set as its first request goes out
    try:
        made, in_place = await stop.unless_aborted(
            _execute(change, api, created, values, under_way.set), under_way
        )
    except NotUnderWay:
        return ChangeResult(change, "not attempted", INTERRUPTED)
    except AgentformError as exc:
        return ChangeResult(change, "failed", str(exc))
    except asyncio.CancelledError:
        if not stop.aborted.is_set():
            raise  # cancelled from outside, not by the stop
        return ChangeResult(change, "failed", CANCELLED)
    status: Status = "already in place" if in_place and not made else "succeeded"
    return ChangeResult(change, status, calls_made=made)
