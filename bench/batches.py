"""Benchmark: a 10,000-item execution batch in the embedded service, in-process.

1. Create it (`POST /execution-batches`): the wall time, and how many write
   transactions it took (it must be one).
2. Run it to completion on the manual clock: batchSize 1,000 every 60 s, an
   organization capacity of 100, executions that end at once (an agent whose
   script has no steps). Reports the wall time, and the scheduler's cost per item triggered
   (the time spent in the batch's release jobs and capacity listener, execution
   starts included) next to the cost of a bare execute measured in the same run
   (`POST /agents/{id}/execute`, and `create_execution` in a transaction of its own).
3. The peak memory: Python allocations while a second, identical batch is
   created and run (tracemalloc, which slows what it watches, so not during the
   timed run), and the process's maximum resident set.

Wall times depend on how busy the machine is; the CPU times and the ratios,
measured side by side in one run, are what to compare.
"""

from __future__ import annotations

import resource
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from agentform.rules.execute import ExecuteRequest
from agentform.service import Seed, create_app
from agentform.service.batches import scheduler, triggering
from agentform.service.executions import lifecycle
from agentform.service.runtime import ManualClock

ITEMS = 10_000
BATCH_SIZE = 1_000
CAPACITY = 100
BARE = 1_000
KEY = "bench-admin-key-0001"
SEED = Seed.model_validate(
    {
        "organizations": [
            {
                "name": "bench",
                "maxConcurrentExecutions": CAPACITY,
                "apiKeys": [{"name": "admin", "key": KEY, "role": "admin"}],
                # Instant: no steps, it starts and completes in one runner step.
                "agents": [{"name": "instant", "script": {"steps": [], "end": {"result": {}}}}],
            }
        ]
    }
)


class Timer:
    """Time spent inside the wrapped functions (outermost calls only): wall and thread CPU."""

    def __init__(self) -> None:
        self.wall = 0.0
        self.cpu = 0.0
        self.depth = 0

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.depth += 1
            wall, cpu = time.perf_counter(), time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.depth -= 1
                if self.depth == 0:
                    self.wall += time.perf_counter() - wall
                    self.cpu += time.thread_time() - cpu

        return timed

    def reset(self) -> None:
        self.wall = self.cpu = 0.0


SCHEDULING = Timer()  # the release job and the capacity listener: all the scheduler does
STARTING = Timer()  # create_execution called by the scheduler
scheduler.advance = SCHEDULING.wrap(scheduler.advance)  # type: ignore[method-assign]
scheduler.fill = SCHEDULING.wrap(scheduler.fill)  # type: ignore[method-assign]
triggering.create_execution = STARTING.wrap(triggering.create_execution)  # type: ignore[attr-defined]


@dataclass
class Service:
    app: Any
    client: TestClient
    clock: ManualClock
    agent: str

    def advance(self, seconds: float) -> None:
        self.client.portal.call(self.clock.advance, seconds)

    def post(self, path: str, body: Any) -> Any:
        return self.client.post(f"/agents/v2{path}", json=body, headers={"X-Api-Key": KEY})


@contextmanager
def service() -> Iterator[Service]:
    with tempfile.TemporaryDirectory() as tmp:
        clock = ManualClock()
        app = create_app(Path(tmp) / "service.db", seed=SEED, clock=clock)
        with TestClient(app) as client:
            agents = client.get("/agents/v2/agents", headers={"X-Api-Key": KEY}).json()
            yield Service(app, client, clock, agents["items"][0]["id"])
        app.state.db.close()


def batch_body(svc: Service) -> dict[str, Any]:
    return {
        "agentId": svc.agent,
        "name": "bench",
        # A second ahead: the create is measured alone; the run starts at advance(1).
        "startAt": (svc.clock.now() + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "config": {"type": "timeBatching", "batchSize": BATCH_SIZE, "batchInterval": 60},
        "items": [{"inputs": {"order": f"A-{n:05d}"}} for n in range(ITEMS)],
    }


def create_and_run(svc: Service) -> dict[str, float]:
    body = batch_body(svc)
    db = svc.app.state.db
    generation = db._generation
    wall, cpu = time.perf_counter(), time.process_time()
    r = svc.post("/execution-batches", body)
    out = {"create_wall": time.perf_counter() - wall, "create_cpu": time.process_time() - cpu}
    assert r.status_code == 201, r.text
    out["transactions"] = (db._generation - generation) // 2
    batch_id = r.json()["id"]
    SCHEDULING.reset()
    STARTING.reset()
    wall = time.perf_counter()
    svc.advance(1)
    rounds = 0
    while True:
        svc.advance(60)
        rounds += 1
        batch = svc.client.get(
            f"/agents/v2/execution-batches/{batch_id}", headers={"X-Api-Key": KEY}
        )
        if batch.json()["status"] == "completed":
            break
    svc.advance(60)  # the last executions end
    out["run_wall"] = time.perf_counter() - wall
    out["rounds"] = rounds
    out["triggered"] = batch.json()["triggeredCount"]
    assert out["triggered"] == ITEMS, batch.json()
    return out


def bare_executes(svc: Service) -> tuple[float, float]:
    """Median POST /execute (in-process) and create_execution in a transaction, in µs."""
    posts = []
    for _ in range(BARE):
        wall = time.perf_counter()
        r = svc.post(f"/agents/{svc.agent}/execute", {})
        posts.append(time.perf_counter() - wall)
        assert r.status_code == 202, r.text
        svc.advance(0)  # it ends at once, freeing its capacity
    db = svc.app.state.db
    with db.read() as conn:
        row = conn.execute("SELECT organization_id FROM agents WHERE id = ?", (svc.agent,))
        org_id = row.fetchone()[0]
    starts = []
    for _ in range(BARE):
        cpu = time.thread_time()
        with db.write() as conn:
            agent = lifecycle.agent_to_run(conn, org_id, svc.agent)
            lifecycle.create_execution(conn, agent, ExecuteRequest(), created_by=None)
        starts.append(time.thread_time() - cpu)
        svc.advance(0)
    return statistics.median(posts) * 1e6, statistics.median(starts) * 1e6


def main() -> None:
    with service() as svc:
        timed = create_and_run(svc)
        post_us, start_us = bare_executes(svc)
    tracemalloc.start()
    with service() as svc:
        create_and_run(svc)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    items = timed["triggered"]
    per_item_cpu = SCHEDULING.cpu / items * 1e6
    own_cpu = (SCHEDULING.cpu - STARTING.cpu) / items * 1e6
    print(
        f"create, {ITEMS:,} items: {timed['create_wall'] * 1000:.0f} ms wall, "
        f"{timed['create_cpu'] * 1000:.0f} ms CPU, {timed['transactions']:.0f} write transaction"
    )
    print(
        f"run to completion (batchSize {BATCH_SIZE:,} every 60 s, capacity {CAPACITY}, "
        f"instant executions): {timed['run_wall']:.1f} s wall, {timed['rounds']:.0f} slices, "
        f"{items / timed['run_wall']:,.0f} items/s with the executions' own steps"
    )
    print(
        f"scheduler per item triggered: {per_item_cpu:.0f} µs CPU, of which starting the "
        f"execution {per_item_cpu - own_cpu:.0f} µs and the scheduler's own work {own_cpu:.0f} µs"
    )
    print(f"bare execute: create_execution in its own transaction {start_us:.0f} µs CPU (median)")
    print(f"bare execute: POST /agents/{{id}}/execute in-process {post_us:.0f} µs wall (median)")
    print(
        f"ratios: scheduler per item / bare create_execution = {per_item_cpu / start_us:.2f}; "
        f"scheduler's own work / bare create_execution = {own_cpu / start_us:.2f}"
    )
    print(f"peak Python allocations, create + run: {peak / 2**20:.1f} MiB; max RSS {rss:.0f} MiB")


if __name__ == "__main__":
    main()
