"""Executing a Plan: each change's calls in order, changes in dependency order with
bounded parallelism. A failed change stops what depends on it; independent work
goes on. Returns a report; progress goes through hooks (the engine never prints)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ..errors import AgentformError
from ..kinds import Kind
from .model import Change, Plan
from .order import dependencies

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


async def _lookup_by_name(api: Any, collection: str, name: str) -> Any:
    items = await api.list_all(collection, {"searchName": name})
    return next((i for i in items if i["name"] == name), None)


async def _execute(change: Change, api: Any) -> int:
    """Makes the change's calls in order; returns how many were made."""
    kind = Kind.registry[change.kind]
    object_id = change.liveId
    made = 0
    for call in change.calls:
        if "{id}" in call.path:
            assert object_id is not None, f"{change.id}: {call.path} before the object exists"
        path = call.path.replace("{id}", object_id or "")
        lookup = None
        if call.creates:

            async def lookup() -> Any:
                return await _lookup_by_name(api, kind.collection, change.key)

        answer = await api.request(
            call.method, path, json=call.body, lookup=lookup, idempotent=call.idempotent or None
        )
        made += 1
        if call.creates:
            object_id = answer["id"]
    return made


async def apply_plan(
    plan: Plan, api: Any, parallelism: int = 8, hooks: ApplyHooks | None = None
) -> ApplyReport:
    hooks = hooks or NoHooks()
    deps = dependencies(plan.changes)
    done: dict[str, asyncio.Future[ChangeResult]] = {
        c.id: asyncio.get_running_loop().create_future() for c in plan.changes
    }
    slots = asyncio.Semaphore(max(1, parallelism))

    async def run(change: Change) -> ChangeResult:
        before = [await done[d] for d in sorted(deps[change.id])]
        blocked = [r.change.id for r in before if r.status != "succeeded"]
        if blocked:
            result = ChangeResult(
                change, "not attempted", f"depends on {', '.join(blocked)}, which did not succeed"
            )
        else:
            async with slots:
                hooks.started(change)
                try:
                    made = await _execute(change, api)
                    result = ChangeResult(change, "succeeded", calls_made=made)
                except AgentformError as exc:
                    result = ChangeResult(change, "failed", str(exc))
        done[change.id].set_result(result)
        hooks.finished(result)
        return result

    results = await asyncio.gather(*(run(c) for c in plan.changes))
    return ApplyReport(list(results))
