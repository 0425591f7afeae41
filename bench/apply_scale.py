"""Benchmark: apply at scale and against a rate-limited service.

1. Apply of 1,000 creates (pools) against `agentform service run` on loopback at
   0 and 50 ms of injected latency per request, next to a sequential script on
   the public SDK (asteroid-odyssey) making the same creates one after another
   with the same latency. Goal at 50 ms: agentform at least 0.8 x parallelism
   times faster. Then the same against a stub service that answers at once (the
   service's own time taken out: on a loaded 2-core machine the real service's
   writes are the bottleneck of both).
2. Plan and apply against `service run --rate-limit 20`: a workspace of 100 pools
   with one member each (200 writes, then 100+ reads), with the client told the
   rate (`--rate-limit 20`) and not told (it adapts to the 429s). Goal: no
   failure, throughput within 10% of the limit. The service's bucket starts full
   (a burst of 20), which a short run can see as a little over 20/s. Throughput
   counts answered requests (a 429 is not an answer).

The machine is shared: compare the ratios of one run, not times across runs.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asteroid_odyssey as sdk

sys.path.insert(0, str(Path(__file__).parent))
from _server import KEY, Running, running_service, stub_service
from _tools import Delayed, timed, timer_floor
from agentform.api.client import ApiClient
from agentform.api.transport import ConnectionShards
from agentform.config.loader import load_workspace
from agentform.engine.apply import apply_plan
from agentform.engine.planner import make_plan

CREATES = 1_000
LATENCIES = (0.0, 0.050)
PARALLELISM = 16
LIMIT = 20.0
LIMITED_POOLS = 100


def workspace(root: Path, prefix: str, n: int, members: bool = False) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "agentform.yaml").write_text("workspace: apply-scale\n")
    extra = ", members: [bot-1]" if members else ""
    lines = [f"  - {{name: {prefix}-{i:05d}{extra}}}" for i in range(n)]
    (root / "pools.yaml").write_text("profilePools:\n" + "\n".join(lines) + "\n")
    return root


async def agentform_apply(
    base: str, root: Path, latency: float, rate: float | None = None
) -> dict[str, Any]:
    """Plan then apply (as `agentform apply --auto-approve` does); the apply's own time."""
    ws = load_workspace(root)
    transport = Delayed(ConnectionShards(PARALLELISM), latency)
    async with ApiClient(
        base, KEY, transport=transport, concurrency=PARALLELISM, rate_limit=rate
    ) as api:
        with timed() as whole:
            plan = await make_plan(ws, api, base)
            planned_calls = api.sent
            with timed() as applying:
                report = await apply_plan(plan, api, parallelism=PARALLELISM)
        return {
            "ok": report.ok,
            "failed": report.count("failed"),
            "wall": applying.wall,
            "whole": whole.wall,
            "apply_calls": api.sent - planned_calls,
            "calls": api.sent,
            "peak": api.concurrency.peak_limit,
            "mean": api.concurrency.mean_in_flight(),
            "statuses": transport.statuses,
            "pauses": api.limiter.pauses,
        }


def sequential_sdk(base: str, prefix: str, n: int, latency: float) -> float:
    """The public SDK, one create after another: seconds."""
    config = sdk.Configuration(host=base.removesuffix("/agents/v2"), api_key={"ApiKeyAuth": KEY})
    with sdk.ApiClient(config) as client:
        pool = client.rest_client.pool_manager
        send: Callable[..., Any] = pool.request

        def delayed(*args: Any, **kwargs: Any) -> Any:
            time.sleep(latency)
            return send(*args, **kwargs)

        pool.request = delayed
        pools = sdk.AgentProfilePoolsApi(client)
        start = time.perf_counter()
        for i in range(n):
            pools.agent_profile_pools_create(
                sdk.AgentsProfileCreateAgentProfilePoolRequest(name=f"{prefix}-{i:05d}")
            )
        return time.perf_counter() - start


def creates(svc: Running, tmp: Path, label: str = "") -> None:
    for latency in LATENCIES:
        ms = int(latency * 1000)
        root = workspace(tmp / f"ws-{ms}{label}", f"af{ms}", CREATES)
        ours = asyncio.run(agentform_apply(svc.base, root, latency))
        assert ours["ok"], ours["failed"]
        theirs = sequential_sdk(svc.base, f"sdk{ms}", CREATES, latency)
        speedup = theirs / ours["wall"]
        goal = 0.8 * PARALLELISM
        print(
            f"apply {CREATES} creates at {ms:2d} ms{label}: agentform {ours['wall']:6.2f} s "
            f"({ours['apply_calls']} calls, in flight peak {ours['peak']:.0f}, "
            f"mean {ours['mean']:.1f}) | sequential SDK script {theirs:6.2f} s -> "
            f"agentform {speedup:.1f}x faster"
            + (f" (goal {goal:.1f}x: {'met' if speedup >= goal else 'NOT met'})" if ms else "")
        )
        if latency:
            calls, peak = ours["apply_calls"], int(ours["peak"])
            floor = calls * latency / peak
            timers = asyncio.run(timer_floor(calls, peak, latency))
            print(
                f"          latency floor at {peak}: {floor:.2f} s -> agentform "
                f"{ours['wall'] / floor:.2f}x | bare asyncio.sleep loop, same calls and "
                f"concurrency: {timers:.2f} s ({timers / floor:.2f}x the floor: this machine's "
                f"timers now)"
            )


def limited(tmp: Path) -> None:
    for told in (True, False):
        with running_service(tmp / f"limited-{told}.db", "--rate-limit", str(LIMIT)) as svc:
            root = workspace(tmp / f"limited-ws-{told}", "lim", LIMITED_POOLS, members=True)
            time.sleep(1.5)  # the service's bucket full again after start-up's reads
            rate = LIMIT if told else None
            applied = asyncio.run(agentform_apply(svc.base, root, 0.0, rate))
            refused = applied["statuses"].count(429)
            throughput = (applied["calls"] - refused) / applied["whole"]
            time.sleep(1.5)
            planned = asyncio.run(plan_only(svc.base, root, rate))
            who = f"client told {LIMIT:.0f}/s" if told else "client not told  "
            answered = planned["calls"] - planned["refused"]
            print(
                f"--rate-limit {LIMIT:.0f}, {who}: plan+apply {applied['calls'] - refused} "
                f"answered in {applied['whole']:.1f} s = {throughput:.1f}/s "
                f"({throughput / LIMIT:.2f}x the limit), failed {applied['failed']}, "
                f"429s {refused} | plan {answered} answered in {planned['wall']:.1f} s = "
                f"{answered / planned['wall']:.1f}/s ({answered / planned['wall'] / LIMIT:.2f}x),"
                f" 429s {planned['refused']}"
            )


async def plan_only(base: str, root: Path, rate: float | None) -> dict[str, Any]:
    ws = load_workspace(root)
    transport = Delayed(ConnectionShards(PARALLELISM), 0.0)
    async with ApiClient(base, KEY, transport=transport, rate_limit=rate) as api:
        with timed() as t:
            plan = await make_plan(ws, api, base)
        assert not plan.has_changes
        return {"calls": api.sent, "wall": t.wall, "refused": transport.statuses.count(429)}


def main() -> None:
    print(f"load average {os.getloadavg()[0]:.2f} at the start")
    with tempfile.TemporaryDirectory() as tmp:
        with running_service(Path(tmp) / "svc.db") as svc:
            creates(svc, Path(tmp))
        with stub_service() as stub:
            creates(stub, Path(tmp), " (service time taken out: a stub)")
        limited(Path(tmp))
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
