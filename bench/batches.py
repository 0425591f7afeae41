"""Benchmark: a 10,000-item execution batch in the embedded service, in-process.

1. Create it (`POST /execution-batches`): the wall time, and how many write
   transactions it took (it must be one).
2. Run it to completion on the manual clock: batchSize 1,000 every 60 s, an
   organization capacity of 100, executions that end at once (an agent whose
   script has no steps). Reports the wall time, and the scheduler's CPU per item
   triggered (its jobs, releases and fills, in the write transactions they share
   with other jobs, and what it does when an execution ends, execution starts
   included) next to a bare execute
   measured in the same service right after (`POST /agents/{id}/execute`, and
   `agent_to_run` + `create_execution` in a transaction of their own: the floor).
   Each round is a fresh service doing both; the ratio is min/median/max of the rounds.
3. The peak memory: Python allocations while one more batch is created and run
   (tracemalloc, which slows what it watches threefold, so apart from the timed
   rounds), and the process's maximum resident set.

    .venv/bin/python bench/batches.py [ITEMS] [ROUNDS]

Goal (issue 30): the scheduler's CPU per item <= 1.5x the bare create_execution.
Wall times depend on how busy the machine is; the CPU times and the ratios,
measured side by side in one run, are what to compare.
"""

from __future__ import annotations

import resource
import statistics
import sys
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
from agentform.service.runtime import ManualClock, transactional

ITEMS = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
GOAL = 1.5
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


SCHEDULING = Timer()  # the batch jobs' transactions and what an ending execution asks of it
STARTING = Timer()  # create_execution called by the scheduler
scheduler.advance = SCHEDULING.wrap(scheduler.advance)  # type: ignore[method-assign]
scheduler.fill = SCHEDULING.wrap(scheduler.fill)  # type: ignore[method-assign]
if hasattr(scheduler, "request_fill"):  # absent before issue 30 (bench an older tree too)
    scheduler.request_fill = SCHEDULING.wrap(scheduler.request_fill)  # type: ignore[method-assign]
triggering.create_execution = STARTING.wrap(triggering.create_execution)  # type: ignore[attr-defined]
_run_one = transactional.run_one
_batch_job = SCHEDULING.wrap(_run_one)


def _timed_job(conn: Any, job: Any, handler: Any, context: Any) -> None:
    """A batch job (release, fill) is the scheduler's, from its check to its handler's end
    (jobs share their write transactions: runtime/transactional.py)."""
    (_batch_job if job.kind.startswith("batch.") else _run_one)(conn, job, handler, context)


transactional.run_one = _timed_job


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
    out["scheduling_cpu"], out["starting_cpu"] = SCHEDULING.cpu, STARTING.cpu
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


def spread(values: list[float]) -> str:
    v = sorted(values)
    return f"{v[0]:.2f} / {statistics.median(v):.2f} / {v[-1]:.2f}"


def main() -> None:
    ratios, own_ratios = [], []
    for n in range(ROUNDS):
        with service() as svc:
            timed = create_and_run(svc)
            post_us, start_us = bare_executes(svc)
        items = timed["triggered"]
        per_item = timed["scheduling_cpu"] / items * 1e6
        starting = timed["starting_cpu"] / items * 1e6
        ratios.append(per_item / start_us)
        own_ratios.append((per_item - starting) / start_us)
        print(
            f"round {n + 1}: create {timed['create_cpu'] * 1000:.0f} ms CPU in "
            f"{timed['transactions']:.0f} write transaction; run {timed['run_wall']:.1f} s wall, "
            f"{timed['rounds']:.0f} slices; scheduler per item {per_item:.0f} µs CPU (starting the "
            f"execution {starting:.0f}, its own work {per_item - starting:.0f}); bare "
            f"create_execution {start_us:.0f} µs CPU; bare POST execute {post_us:.0f} µs wall"
        )
    print(
        f"ratio, scheduler per item / bare create_execution (min / median / max of {ROUNDS}): "
        f"{spread(ratios)} (goal <= {GOAL}); its own work alone: {spread(own_ratios)}"
    )
    tracemalloc.start()
    with service() as svc:
        create_and_run(svc)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak Python allocations, create + run: {peak / 2**20:.1f} MiB; max RSS {rss:.0f} MiB")


if __name__ == "__main__":
    main()
