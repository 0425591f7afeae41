"""Executing a Plan: each change's calls in order, changes stage by stage (kind
levels: creates forward, cancels and deletes backward), the changes of a stage
concurrently with bounded parallelism. A failed change stops what depends on it;
independent work goes on. Ids created by earlier changes and sensitive values
from the workspace fill the calls' slots. Returns a report; progress goes through
hooks (the engine never prints)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ..errors import AgentformError
from ..kinds import Kind
from ..kinds.keys import Key
from .model import Change, Plan
from .order import stages
from .slots import fill

Status = Literal["succeeded", "failed", "not attempted"]


@dataclass
class ChangeResult:
    change: Change
    status: Status
    error: str | None = None
    calls_made: int = 0


@dataclass
class ApplyReport:
    results: list[ChangeResult] = field(default_factory=list)

    def count(self, status: Status) -> int:
        return sum(r.status == status for r in self.results)

    @property
    def ok(self) -> bool:
        return all(r.status == "succeeded" for r in self.results)


class ApplyHooks(Protocol):
    def started(self, change: Change) -> None: ...
    def finished(self, result: ChangeResult) -> None: ...


class NoHooks:
    def started(self, change: Change) -> None:
        pass

    def finished(self, result: ChangeResult) -> None:
        pass


def sensitive_needed(plan: Plan) -> set[str]:
    return {
        s.sensitive for c in plan.changes for call in c.calls for s in call.slots if s.sensitive
    }


async def _execute(
    change: Change, api: Any, created: dict[str, str], values: Mapping[str, str]
) -> int:
    """Makes the change's calls in order; returns how many were made."""
    kind = Kind.registry[change.kind]
    made = 0
    for call in change.calls:
        path, body = fill(call, created, values)
        lookup = None
        if call.creates:

            async def lookup(body: Any = body) -> Any:
                return await kind.find_created(api, Key.parse(change.key), body)

        answer = await api.request(
            call.method, path, json=body, lookup=lookup, idempotent=call.idempotent or None
        )
        made += 1
        if call.creates:
            created[change.id] = answer["id"]
    return made


async def apply_plan(
    plan: Plan,
    api: Any,
    parallelism: int = 8,
    hooks: ApplyHooks | None = None,
    values: Mapping[str, str] | None = None,
) -> ApplyReport:
    """Executes `plan`; `values` holds the sensitive values its slots name (from
    `engine.sensitive.sensitive_values`): a missing one refuses before any write."""
    hooks = hooks or NoHooks()
    values = values or {}
    missing = sorted(sensitive_needed(plan) - set(values))
    if missing:
        raise AgentformError(
            f"the workspace does not hold {', '.join(missing)}, which the plan sends; "
            "nothing was written"
        )
    ordered = stages(plan.changes)
    loop = asyncio.get_running_loop()
    done: dict[str, asyncio.Future[ChangeResult]] = {
        c.id: loop.create_future() for stage in ordered for c in stage
    }
    created: dict[str, str] = {}
    slots = asyncio.Semaphore(max(1, parallelism))

    async def run(change: Change) -> ChangeResult:
        before = [await done[d] for d in change.dependsOn]
        blocked = [r.change.id for r in before if r.status != "succeeded"]
        if blocked:
            result = ChangeResult(
                change, "not attempted", f"depends on {', '.join(blocked)}, which did not succeed"
            )
        else:
            async with slots:
                hooks.started(change)
                try:
                    made = await _execute(change, api, created, values)
                    result = ChangeResult(change, "succeeded", calls_made=made)
                except AgentformError as exc:
                    result = ChangeResult(change, "failed", str(exc))
        done[change.id].set_result(result)
        hooks.finished(result)
        return result

    results: list[ChangeResult] = []
    for stage in ordered:
        results += await asyncio.gather(*(run(c) for c in stage))
    return ApplyReport(results)
