"""The fault matrix (issue 20): one apply of ~160 changes of all five kinds
through the fault proxy, seed by seed, on a fresh service each time.

A "before" workspace is applied directly (no faults) so that the apply under
faults has creates, updates, replaces, cancels and deletes of every kind to
make; then the "after" workspace is applied once through the proxy, and a plan
made directly says what is still to do. A held request times out at once
(tests/fault_proxy.py, held="answered"): the client sees the timeout its own
clock would have raised, without spending it. Shared by tests/test_fault_injection.py
and bench/fault_matrix.py.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from agentform.api.client import ApiClient
from agentform.api.retries import RetryPolicy
from agentform.config.loader import Workspace, load_workspace
from agentform.engine.apply import ApplyReport, apply_plan
from agentform.engine.planner import make_plan
from agentform.service import DEMO_ADMIN_KEY, create_app
from tests.fault_proxy import TimesOutWhenHeld, fault_proxy
from tests.loopback import serving

# What the issue measured with: 10% 429, 5% 503, 2% drops, answers lost after
# the write landed, answers held past the client's timeout (reads as writes).
RATES = {
    "429": 0.10,
    "503": 0.05,
    "drop-before": 0.01,
    "drop-after": 0.01,
    "hold-before": 0.005,
    "hold-after": 0.01,
}
CLIENT_TIMEOUT = 0.5
START = "2099-01-01T00:00:00Z"  # batches stay pending: they can be replaced and cancelled
BOTS = [f"bot-{i}" for i in range(1, 7)]
AGENTS = ("support-agent", "checkout-agent", "refund-agent")


def _members(i: int) -> str:
    return ", ".join(BOTS[(i + k) % 6] for k in range(1 + i % 3))


def _pools(after: bool) -> str:
    if not after:  # ten to update, five to delete
        lines = [f"  - {{name: pool-{i}, allowConcurrentUse: true}}" for i in range(10)]
        lines += [f"  - {{name: gone-pool-{i}, members: [bot-1]}}" for i in range(5)]
    else:
        lines = [
            f"  - {{name: pool-{i}, allowConcurrentUse: false, members: [{_members(i)}]}}"
            for i in range(40)
        ]
        lines += [f"  - {{name: gone-pool-{i}, ensure: absent}}" for i in range(5)]
    return "profilePools:\n" + "\n".join(lines) + "\n"


def _groups(after: bool) -> str:
    names = [f"group-{i}" for i in range(25)] if after else [f"stale-{i}" for i in range(5)]
    lines = [f"  - {{name: {n}, members: [{_members(i + 2)}]}}" for i, n in enumerate(names)]
    return "profileGroups:\n" + "\n".join(lines) + "\n"


def _templates(after: bool) -> str:
    out = ["vaultTemplates:"]
    for i in range(15 if after else 5):
        out += [
            f"  - name: Template {i}",
            "    kind: login",
            f"    description: {'number' if after else 'old'} {i}",
            "    fields: [{type: username, label: User, required: true}]",
        ]
    return "\n".join(out) + "\n"


def _webhooks(after: bool) -> str:
    out = ["webhooks:"]
    for i in range(20 if after else 5):
        version = "v2" if after else "v1"
        out += [f"  - name: hook-{i}", f"    url: https://hooks.example.com/{version}/{i}"]
        out.append("    attachments:")
        rules = "[EXECUTION_COMPLETED, EXECUTION_FAILED]" if after else "[EXECUTION_COMPLETED]"
        for agent in AGENTS[: 1 + i % 2] if after else AGENTS[:1]:
            out.append(f"      - {{agent: {agent}, eventRules: {rules}}}")
    if after:
        out += [f"  - {{name: old-hook-{i}, ensure: absent}}" for i in range(3)]
    else:
        out += [f"  - {{name: old-hook-{i}, url: https://hooks.example.com/old}}" for i in range(3)]
    return "\n".join(out) + "\n"


def _batches(after: bool) -> str:
    out = ["batches:"]

    def batch(name: str, size: int) -> None:
        out.extend(
            [
                f"  - name: {name}",
                "    agent: support-agent",
                f"    startAt: {START!r}",
                f"    config: {{type: timeBatching, batchSize: {size}, batchInterval: 60}}",
                "    items: [{inputs: {question: Where is A-1?}}]",
            ]
        )

    for i in range(5):  # replaced (their size changes), or cancelled
        batch(f"replaced-{i}", 3 if after else 2)
        if after:
            out.append(f"  - {{name: cancelled-{i}, agent: support-agent, ensure: absent}}")
        else:
            batch(f"cancelled-{i}", 2)
    for i in range(10 if after else 0):
        batch(f"new-{i}", 2)
    return "\n".join(out) + "\n"


def files(after: bool) -> dict[str, str]:
    return {
        "agentform.yaml": "workspace: matrix\nprune: [profileGroups]\n",
        "pools.yaml": _pools(after),
        "groups.yaml": _groups(after),
        "vault.yaml": _templates(after),
        "webhooks.yaml": _webhooks(after),
        "batches.yaml": _batches(after),
    }


def write(root: Path, after: bool) -> Workspace:
    root.mkdir(parents=True, exist_ok=True)
    for old in root.glob("*.yaml"):
        old.unlink()
    for name, text in files(after).items():
        (root / name).write_text(text)
    return load_workspace(root)


async def _no_wait(_: float) -> None:
    await asyncio.sleep(0)


def client(origin: str) -> ApiClient:
    """A client with the default attempts, waits skipped, a short timeout, and a
    held request's timeout raised at once."""
    api = ApiClient(
        f"{origin}/agents/v2",
        DEMO_ADMIN_KEY,
        retry=RetryPolicy(base_delay=0.001, max_delay=0.01),
        sleep=_no_wait,
    )
    api.sender.extensions = {"timeout": httpx.Timeout(CLIENT_TIMEOUT).as_dict()}
    api.sender.transport = TimesOutWhenHeld(api.sender.transport)
    return api


def _run(origin: str, fn: Any) -> Any:
    async def go() -> Any:
        async with client(origin) as api:
            return await fn(api)

    return asyncio.run(go())


def apply_once(origin: str, workspace: Workspace) -> ApplyReport:
    async def go(api: ApiClient) -> ApplyReport:
        plan = await make_plan(workspace, api, "matrix")
        return await apply_plan(plan, api, parallelism=8)

    return _run(origin, go)  # type: ignore[no-any-return]


def still_needed(origin: str, workspace: Workspace) -> set[str]:
    """The changes a plan made now, directly (no faults), would make."""
    plan = _run(origin, lambda api: make_plan(workspace, api, "direct"))
    return {c.id for c in plan.changes}


@dataclass
class Outcome:
    seed: int
    changes: int  # what the apply under faults had to do
    converged: bool  # nothing left to do after that one apply
    exit_code: int  # what `agentform apply` exits with for its report
    landed_reported_failed: list[str]  # reported failed, yet done
    reported_done_not_done: list[str]
    injected: dict[str, int]
    failures: list[tuple[str, str]]  # (change, why) of every change not done


def run_seed(seed: int, folder: Path) -> Outcome:
    """One seed: a fresh service, the before workspace applied directly, the after
    one once through faults; what came of it."""
    with serving(create_app(folder / "service.db")) as origin:
        before = apply_once(origin, write(folder / "ws", after=False))
        assert before.ok, [(r.change.id, r.error) for r in before.results if r.error]
        workspace = write(folder / "ws", after=True)
        planned = still_needed(origin, workspace)
        with fault_proxy(origin, seed, RATES, held="answered") as proxy:
            report = apply_once(proxy.url, workspace)
            injected = dict(proxy.injected)
        needed = still_needed(origin, workspace)
    failed = {r.change.id for r in report.results if r.status == "failed"}
    done = {r.change.id for r in report.results if r.status in ("succeeded", "already in place")}
    return Outcome(
        seed,
        len(planned),
        converged=not needed,
        exit_code=0 if report.ok else 1,
        landed_reported_failed=sorted(failed - needed),
        reported_done_not_done=sorted(done & needed),
        injected=injected,
        failures=[(r.change.id, r.error or "") for r in report.results if r.error],
    )
