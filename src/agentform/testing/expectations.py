"""The expectations on the service's state: an execution, a batch, the apply's calls;
and the policies' verdict on the plan the test applied.

Each reads the test's service through the API and raises StepFailed with a
message saying what was expected and what was found (deliveries have their own
module, with the explanation of why an event was or was not delivered; `plan:
empty` is the runner's, which holds the workspace).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from agentform.config.loader import Workspace
from agentform.core.problems import did_you_mean
from agentform.engine.model import Plan
from agentform.policies.changes import judging
from agentform.rules.webhook_attachments import json_equal
from agentform.testing.model import CallExpect, Expect
from agentform.testing.results import StepError, StepFailed
from agentform.testing.session import Call
from agentform.testing.steps import Context

COUNT_FIELDS = {
    "total": "totalCount",
    "pending": "pendingCount",
    "awaitingCapacity": "awaitingCapacityCount",
    "triggered": "triggeredCount",
    "cancelled": "cancelledCount",
    "failed": "failedCount",
}
SHOWN = 5  # offenders listed in a message, at most
_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def subset_differences(expected: Any, actual: Any, at: str = "") -> list[str]:
    """Where `actual` does not hold `expected` (maps: the keys given; lists: item by item)."""
    where = at or "the value"
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{where} is not an object"]
        out: list[str] = []
        for key, value in expected.items():
            path = f"{at}.{key}" if at else str(key)
            if key not in actual:
                out.append(f"{path} is missing")
            else:
                out += subset_differences(value, actual[key], path)
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{where} is {_short(actual)}, expected {_short(expected)}"]
        return [
            d
            for i, e in enumerate(expected)
            for d in subset_differences(e, actual[i], f"{at}[{i}]")
        ]
    if not json_equal(expected, actual):
        return [f"{where} is {_short(actual)}, expected {_short(expected)}"]
    return []


def _short(value: Any, limit: int = 120) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


async def expect_execution(ctx: Context, expect: Expect) -> None:
    assert expect.execution is not None
    name = expect.execution
    found = await ctx.service.api.request("GET", f"/executions/{ctx.execution(name)}")
    problems = []
    if expect.status is not None and found["status"] != expect.status:
        problems.append(f"execution {name} is {found['status']}, expected {expect.status}")
    if expect.pool is not None:
        pool = await ctx.id_of("/agent-profile-pools", expect.pool)
        if found.get("agentProfilePoolId") != pool:
            problems.append(f"execution {name} did not run through pool {expect.pool}")
    if expect.result is not None:
        problems += [
            f"execution {name}: result {d}"
            for d in subset_differences(expect.result, found.get("result"))
        ]
    if problems:
        raise StepFailed("\n".join(problems))


async def expect_batch(ctx: Context, expect: Expect) -> None:
    assert expect.batch is not None
    agent_name, _, name = expect.batch.partition("/")
    agent = await ctx.id_of("/agents", agent_name)
    batches = await ctx.service.api.list_all(
        "/execution-batches", params={"agentId": agent, "searchName": name}
    )
    matching = [b for b in batches if b["name"] == name]
    if not matching:
        raise StepFailed(f"no batch {expect.batch} exists")
    batch = next((b for b in matching if b["status"] != "cancelled"), matching[-1])
    problems = []
    if expect.status is not None and batch["status"] != expect.status:
        problems.append(f"batch {expect.batch} is {batch['status']}, expected {expect.status}")
    for short, count in (expect.counts or {}).items():
        actual = batch.get(COUNT_FIELDS[short])
        if actual != count:
            problems.append(f"batch {expect.batch}: {short} is {actual}, expected {count}")
    if expect.executions is not None:
        problems += await _batch_executions(ctx, expect, str(batch["id"]))
    if problems:
        raise StepFailed("\n".join(problems))


async def _batch_executions(ctx: Context, expect: Expect, batch_id: str) -> list[str]:
    assert expect.executions is not None
    wanted = expect.executions
    runs = await ctx.service.api.list_all("/executions", params={"batchId": batch_id})
    if not runs:
        return [f"batch {expect.batch} started no execution"]
    pool = await ctx.id_of("/agent-profile-pools", wanted.pool) if wanted.pool else None
    off = []
    for run in runs:
        if wanted.status is not None and run["status"] != wanted.status:
            off.append(f"{run['id']} is {run['status']}")
        elif pool is not None and run.get("agentProfilePoolId") != pool:
            off.append(f"{run['id']} did not run through pool {wanted.pool}")
    if not off:
        return []
    listed = "; ".join(off[:SHOWN]) + (f"; … {len(off) - SHOWN} more" if len(off) > SHOWN else "")
    return [f"batch {expect.batch}: {len(off)} of {len(runs)} executions differ: {listed}"]


def _pattern(path: str) -> re.Pattern[str]:
    """`*` stands for one path segment, `**` for any number of them."""
    parts = [
        ".*" if p == "**" else "[^/]+" if p == "*" else re.escape(p)
        for p in path.strip("/").split("/")
    ]
    return re.compile("/" + "/".join(parts))


def expect_calls(calls: Sequence[Call], wanted: Sequence[CallExpect]) -> None:
    problems = []
    for w in wanted:
        pattern = _pattern(w.path)
        made = sum(c.method == w.method and pattern.fullmatch(c.path) is not None for c in calls)
        if (w.count is None and made == 0) or (w.count is not None and made != w.count):
            expected = "at least 1" if w.count is None else str(w.count)
            same = sorted({_ID.sub("*", c.path) for c in calls if c.method == w.method})
            seen = f"; its {w.method} calls: {', '.join(same[:10])}" if same else ""
            problems.append(
                f"{w.method} {w.path}: the apply made {made}, expected {expected}{seen}"
            )
    if problems:
        raise StepFailed("\n".join(problems))


def expect_policy(workspace: Workspace, plan: Plan, rule: str, violated: bool) -> None:
    """Whether the plan the test applied violates `rule`, judged by the policies that
    judge the workspace's plans (policies/*.yaml)."""
    verdicts = judging(workspace.root).judged(plan, workspace).policies
    names = [r.name for r in verdicts.rules] if verdicts else []
    if verdicts is None or rule not in names:
        raise StepError(f"no policy rule {rule}{did_you_mean(rule, names)}")
    found = [v for v in verdicts.violations if v.rule == rule]
    if violated and not found:
        raise StepFailed(f"expected the plan to violate {rule}: it does not")
    if not violated and found:
        lines = [f"  {v.address or 'the plan'}: {v.message}" for v in found[:SHOWN]]
        raise StepFailed(f"expected the plan not to violate {rule}:\n" + "\n".join(lines))
