"""Benchmark: webhook deliveries while executions run, beside a plain POST loop.

250 executions of a 10-step script start at once (16 requests at a time) on
`agentform service run` (uvicorn, wall clock), one attachment taking every
event, sent to a receiver process on loopback. Each round measures:

- the steady delivery rate: the middle 80% of the receipts (the first and last
  tenth are the ramp up and the tail), deliveries per second;
- then a plain httpx POST loop to the same receiver, 32 at a time, in the same
  round: the floor of the HTTP part. The ratio's goal is >= 0.8;
- the CPU per delivery of the service and its delivery workers (emission included), from /proc,
  beside the plain client's CPU per POST: their ratio is what one process doing
  both sides of the work can reach at most when the plain loop is bound by its
  client (it is an upper bound: the service's SQLite work partly runs on the
  other core, outside the interpreter's lock).

Three rounds, interleaved, give min/median/max. Then events are emitted at half
the median live rate (executions started at a steady pace) and the p99 time
from an event to its receipt is printed (goal <= 1 s); and, as
`bench/deliveries.py` measures it, a backlog of the first round's deliveries is
resent with the service stopped and drained by the restarted service, beside a
plain loop at one integration's share of the slots (goal: keep >= 0.8).

    .venv/bin/python bench/deliveries_live.py [EXECUTIONS] [ROUNDS] [DELIVERY_WORKERS]

DELIVERY_WORKERS is passed as `service run --delivery-workers` (0: one process
emits and sends, as docs/performance.md's "in one process" figures); without it
the service starts its default.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from deliveries import (
    KEY,
    PER_EXECUTION,
    bare_posts,
    paced_executions,
    percentile,
    places,
    process,
    rate_of,
    resend_everything,
    run_executions,
    service,
    wait_for,
    wait_until,
)

PLAIN_CONCURRENCY = 32
LIVE_GOAL = 0.8
P99_GOAL_MS = 1000.0


@dataclass
class Round:
    live: float  # deliveries/s, steady
    plain: float  # POSTs/s
    cpu_ms: float  # service CPU per delivery
    plain_cpu_ms: float  # the plain client's CPU per POST


def steady_rate(records: list[list[Any]]) -> float:
    """Deliveries per second over the middle 80% of the receipts."""
    receipts = sorted(r[0] for r in records)
    low, high = len(receipts) // 10, len(receipts) * 9 // 10
    return float((high - low) / (receipts[high - 1] - receipts[low]))


def cpu_seconds(pid: int) -> float:
    """User + system CPU so far of a process and its live children (Linux /proc): the
    service and its delivery workers (`service run --delivery-workers`)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    children = [
        int(child)
        for listing in Path(f"/proc/{pid}/task").glob("*/children")
        for child in listing.read_text().split()
    ]
    return own + sum(map(cpu_seconds, children))


def live_round(base: str, receiver: str, agent: str, count: int, pid: int) -> Round:
    httpx.post(f"{receiver}/reset", timeout=30)
    cpu = cpu_seconds(pid)
    asyncio.run(run_executions(base, agent, count))
    records = wait_until(receiver, count * PER_EXECUTION)
    cpu = cpu_seconds(pid) - cpu
    live = steady_rate(records)
    posts = max(2000, len(records) // 2)
    client = time.process_time()
    plain = asyncio.run(bare_posts(f"{receiver}/hook", posts, PLAIN_CONCURRENCY))
    client = time.process_time() - client
    return Round(live, plain, cpu / len(records) * 1000, client / posts * 1000)


def spread(values: list[float], fmt: str = "{:.2f}") -> str:
    return " / ".join(fmt.format(v) for v in (min(values), statistics.median(values), max(values)))


def main() -> None:
    from agentform.service.delivery.fairness import INTEGRATION_SHARE

    count = int(sys.argv[1]) if len(sys.argv) > 1 else 250
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    workers = ["--delivery-workers", str(int(sys.argv[3]))] if len(sys.argv) > 3 else []
    with tempfile.TemporaryDirectory() as tmp:
        run = places(tmp)
        base, receiver = run.base, run.receiver
        command = [*service(run.service_port, run.db, run.seed), *workers]
        with process(str(Path(__file__).parent / "_receiver.py"), str(run.receiver_port)):
            wait_for(f"{receiver}/records")
            with process(*command) as proc:
                wait_for(f"{base}/context", {"X-Api-Key": KEY})
                with httpx.Client(base_url=base, headers={"X-Api-Key": KEY}, timeout=30) as api:
                    agents = {a["name"]: a["id"] for a in api.get("/agents").json()["items"]}
                    hook = api.post(
                        "/webhook-integrations", json={"name": "bench", "url": f"{receiver}/hook"}
                    )
                    agent = agents["ten-steps"]
                    api.put(
                        f"/agents/{agent}/webhooks/{hook.json()['id']}", json={"eventRules": ["*"]}
                    )
                results = [
                    live_round(base, receiver, agent, count, proc.pid) for _ in range(rounds)
                ]
                half = statistics.median(r.live for r in results) / 2
                httpx.post(f"{receiver}/reset", timeout=30)
                paced = asyncio.run(paced_executions(base, agent, half))
                paced_records = wait_until(receiver, paced * PER_EXECUTION)
            backlog = resend_everything(run.db, limit=count * PER_EXECUTION)
            httpx.post(f"{receiver}/reset", timeout=30)
            with process(*command):
                drained = rate_of(wait_until(receiver, backlog))
                bare = asyncio.run(bare_posts(f"{receiver}/hook", backlog, INTEGRATION_SHARE))
    latency = [(r[0] - r[1]) * 1000 for r in paced_records]
    ratios = [r.live / r.plain for r in results]
    print(
        "\n".join(
            [
                f"{count} executions x {PER_EXECUTION} events, one attachment taking every "
                f"event; {rounds} rounds (min / median / max); "
                f"{' '.join(workers) or 'the default delivery workers'}",
                f"live deliveries, steady:        {spread([r.live for r in results], '{:.0f}')} /s",
                f"plain POSTs, {PLAIN_CONCURRENCY} at a time:      "
                f"{spread([r.plain for r in results], '{:.0f}')} /s",
                f"live / plain:                   {spread(ratios)}   (goal >= {LIVE_GOAL})",
                f"CPU per live delivery:          {spread([r.cpu_ms for r in results])} ms "
                "(emission included; the service and its delivery workers)",
                f"plain client CPU per POST:      {spread([r.plain_cpu_ms for r in results])} ms"
                f"   ratio {spread([r.plain_cpu_ms / r.cpu_ms for r in results])}",
                f"event -> receipt at half the live rate ({half:.0f} events/s, "
                f"{len(paced_records)} deliveries): p50 {percentile(latency, 50):.0f} ms, "
                f"p99 {percentile(latency, 99):.0f} ms   (goal p99 <= {P99_GOAL_MS:.0f} ms)",
                f"a backlog of {backlog} drained: {drained:.0f} /s, plain POSTs "
                f"{INTEGRATION_SHARE} at a time {bare:.0f} /s   ratio {drained / bare:.2f}"
                f"   (goal >= {LIVE_GOAL}, as bench/deliveries.py)",
                f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}",
            ]
        )
    )


if __name__ == "__main__":
    main()
