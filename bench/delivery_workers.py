"""Benchmark: live webhook deliveries with 0, 1 and 2 delivery worker processes.

`agentform service run --delivery-workers N` (wall clock) runs EXECUTIONS
executions of a 10-step script started at once (16 requests at a time), one
attachment taking every event, sent to a receiver process on loopback. For each
N, in each round (interleaved: N = 0, 1, 2, then again), it measures:

- the steady delivery rate while the executions run: the middle 80% of the
  receipts (the first and last tenth are the ramp up and the tail);
- just after, in the same round, a plain httpx POST loop to the same receiver,
  32 at a time: the floor of the HTTP part. Goal: live / plain >= 0.8;
- the CPU per delivery of the service and its workers together (/proc).

    .venv/bin/python bench/delivery_workers.py [EXECUTIONS] [ROUNDS]
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from deliveries import (
    KEY,
    PER_EXECUTION,
    SEED,
    bare_posts,
    free_port,
    process,
    run_executions,
    service,
    wait_for,
    wait_until,
)
from deliveries_live import LIVE_GOAL, PLAIN_CONCURRENCY, cpu_seconds, spread, steady_rate

SETTINGS = (0, 1, 2)


@contextmanager
def served(port: int, db: Path, seed: Path, workers: int) -> Iterator[int]:
    """The service with `workers` delivery workers, started; its pid."""
    command = [sys.executable, *service(port, db, seed), "--delivery-workers", str(workers)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # the banner's last line
            if line.startswith("delivery workers") or (line.startswith("console:") and not workers):
                break
        yield proc.pid
    finally:
        proc.terminate()
        proc.wait(60)


def one_round(tmp: Path, receiver: str, workers: int, count: int) -> tuple[float, float, float]:
    """(live deliveries/s, plain POSTs/s, ms of CPU per delivery) on a fresh database."""
    port, db = free_port(), tmp / f"w{workers}-{os.urandom(4).hex()}.db"
    base = f"http://127.0.0.1:{port}/agents/v2"
    with served(port, db, tmp / "seed.yaml", workers) as pid:
        wait_for(f"{base}/context", {"X-Api-Key": KEY})
        with httpx.Client(base_url=base, headers={"X-Api-Key": KEY}, timeout=30) as api:
            agent = {a["name"]: a["id"] for a in api.get("/agents").json()["items"]}["ten-steps"]
            hook = api.post("/webhook-integrations", json={"name": "b", "url": f"{receiver}/hook"})
            api.put(f"/agents/{agent}/webhooks/{hook.json()['id']}", json={"eventRules": ["*"]})
        httpx.post(f"{receiver}/reset", timeout=30)
        cpu = cpu_seconds(pid)  # the workers' included: its children
        asyncio.run(run_executions(base, agent, count))
        records = wait_until(receiver, count * PER_EXECUTION)
        cpu = cpu_seconds(pid)  # the workers' included: its children - cpu
    plain = asyncio.run(
        bare_posts(f"{receiver}/hook", max(2000, len(records) // 2), PLAIN_CONCURRENCY)
    )
    return steady_rate(records), plain, cpu / len(records) * 1000


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    results: dict[int, list[tuple[float, float, float]]] = {n: [] for n in SETTINGS}
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        (tmp / "seed.yaml").write_text(json.dumps(SEED))  # JSON is YAML
        receiver_port = free_port()
        receiver = f"http://127.0.0.1:{receiver_port}"
        with process(str(Path(__file__).parent / "_receiver.py"), str(receiver_port)):
            wait_for(f"{receiver}/records")
            for _ in range(rounds):
                for workers in SETTINGS:
                    results[workers].append(one_round(tmp, receiver, workers, count))
    lines = [
        f"{count} executions x {PER_EXECUTION} events, one attachment taking every event; "
        f"{rounds} rounds, interleaved (min / median / max)"
    ]
    for workers, runs in results.items():
        lines += [
            f"--delivery-workers {workers}: live {spread([r[0] for r in runs], '{:.0f}')} /s, "
            f"plain POSTs ({PLAIN_CONCURRENCY} at a time) {spread([r[1] for r in runs], '{:.0f}')}"
            f" /s, ratio {spread([r[0] / r[1] for r in runs])} (goal >= {LIVE_GOAL}); "
            f"CPU per delivery {spread([r[2] for r in runs])} ms (all processes)"
        ]
    lines.append(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
