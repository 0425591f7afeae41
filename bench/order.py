"""Benchmark: ordering a plan of 1,000, 4,000 and 10,000 changes.

"before" is the pairwise dependency computation the engine used until kind
levels replaced it (kept here, verbatim in substance, as the baseline); "after"
is `engine.order.stages`. Both run on the same changes in one process: creates
and updates of every registered kind, and one delete in ten. Also timed: a full
`apply_plan` of the changes against an API that answers at once, so the cost
of scheduling (stages, futures, slots) shows without any network.

Prints seconds per size and the before/after ratio.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1] / "src"))
from agentform.engine.apply import apply_plan
from agentform.engine.model import Change, Plan, Summary
from agentform.engine.order import stages
from agentform.kinds import Kind
from agentform.kinds.model import ApiCall

SIZES = (1_000, 4_000, 10_000)


def pairwise_dependencies(changes: list[Change]) -> dict[str, set[str]]:
    """The former engine/order.py: every change compared with every other."""
    registry = Kind.registry
    deps: dict[str, set[str]] = {c.id: set(c.dependsOn) for c in changes}
    for change in changes:
        kind = registry[change.kind]
        for other in changes:
            if other is change:
                continue
            if change.action != "delete" and other.action != "delete":
                if other.kind in kind.depends_on:
                    deps[change.id].add(other.id)
            elif (
                change.action == "delete"
                and other.action == "delete"
                and change.kind in registry[other.kind].depends_on
            ):
                deps[change.id].add(other.id)
    return deps


def make_changes(n: int) -> list[Change]:
    kinds = [k for k in Kind.registry.values() if k.parent is None]
    out = []
    for i in range(n):
        kind = kinds[i % len(kinds)]
        action = "delete" if i % 10 == 9 else ("create" if i % 2 else "update")
        out.append(
            Change(
                id=f"{kind.name}/obj-{i:05d}",
                kind=kind.name,
                key=f"obj-{i:05d}",
                action=action,
                reason="bench",
                liveId=None if action == "create" else f"id-{i}",
                calls=(ApiCall(method="POST", path=kind.collection, body={"name": f"obj-{i}"}),),
            )
        )
    return out


class InstantApi:
    async def request(self, method: str, path: str, **_: Any) -> Any:
        return {"id": "x"}


def timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    print(f"kinds: {', '.join(sorted(Kind.registry))}")
    for n in SIZES:
        changes = make_changes(n)
        plan = Plan(
            workspace="bench",
            endpoint="bench",
            organizationId="o",
            organizationName="o",
            changes=tuple(c for s in stages(changes) for c in s),
            summary=Summary(),
            inputsDigest="",
            fingerprints={},
        )
        before = timed(lambda changes=changes: pairwise_dependencies(changes))
        after = timed(lambda changes=changes: stages(changes))
        apply = timed(lambda plan=plan: asyncio.run(apply_plan(plan, InstantApi(), 8)))
        print(
            f"N={n:>6}: order before {before:7.3f} s | after {after:7.4f} s | "
            f"ratio {before / after:8.0f}x | whole apply (instant API) {apply:6.2f} s"
        )


if __name__ == "__main__":
    main()
