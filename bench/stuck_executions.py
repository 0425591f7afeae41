"""Stress: do executions end when their script says, on the real clock? (issue 20)

`agentform service run` (the demo seed, the wall clock) in a subprocess; executions
of the demo's `support-agent` (its script takes about 3 s) run in two ways, while
clients keep reading the service's executions:

- alone: ALONE executions one after another, as a user trying it would: nothing
  but the execution's own steps wakes the service's runner;
- together: ROUNDS waves of WAVE executions at once;

and, in-process, the runner alone on the wall clock (the mechanism of issue 20):
JOBS jobs committed one at a time, each due a few milliseconds after the commit
that wakes the runner, SPACING apart. Reports how late each ran; a job the runner
lost runs only when the next commit wakes it (about SPACING late), or never.

For each, the time from the execute call to the first read that shows it ended.
Reports the distribution of that time (seconds) and how many took longer than
STUCK seconds (given up on at GIVE_UP): an execution whose script takes 3 s still
`running` after 15 s lost its runner's wake-up. The count must be 0.

    python bench/stuck_executions.py [ALONE] [ROUNDS] [WAVE]
"""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path

import httpx

from _server import KEY, running_service
from agentform.service.clock import WallClock
from agentform.service.runtime import JobHandlers, RunContext, Runner
from agentform.service.store import jobs
from agentform.service.store.database import Conn, Database
from agentform.service.store.jobs import Job

ALONE = 60
ROUNDS = 5
WAVE = 8
STUCK = 15.0
GIVE_UP = 20.0
READERS = 4
JOBS = 100
SPACING = 0.2
LATE = 0.1


async def _ended(client: httpx.AsyncClient, execution: str) -> str | None:
    r = await client.get(f"/executions/{execution}")
    status = str(r.json()["status"])
    return status if status in ("completed", "failed", "cancelled") else None


async def _one(client: httpx.AsyncClient, agent: str) -> tuple[float, str]:
    """Seconds from execute to the first read that shows the execution ended."""
    started = time.monotonic()
    r = await client.post(f"/agents/{agent}/execute", json={})
    execution = r.json()["executionId"]
    while time.monotonic() - started < GIVE_UP:
        if await _ended(client, execution):
            return time.monotonic() - started, execution
        await asyncio.sleep(0.02)
    return GIVE_UP, execution


async def _noise(client: httpx.AsyncClient, stop: asyncio.Event) -> None:
    """Reads that keep the service's threads and database busy meanwhile."""
    while not stop.is_set():
        await client.get("/executions", params={"pageSize": 20})


async def stress(base: str, rounds: int, wave: int) -> list[float]:
    headers = {"X-Api-Key": KEY}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=30) as client:
        agents = (await client.get("/agents", params={"pageSize": 100})).json()["items"]
        agent = next(a["id"] for a in agents if a["name"] == "support-agent")
        times: list[float] = []
        stop = asyncio.Event()
        noise = [asyncio.create_task(_noise(client, stop)) for _ in range(READERS)]
        for _ in range(rounds):
            done = await asyncio.gather(*(_one(client, agent) for _ in range(wave)))
            times += [t for t, _ in done]
            for seconds, execution in done:
                if seconds > STUCK:
                    print(f"  stuck: {execution} not ended after {seconds:.1f} s")
        stop.set()
        await asyncio.gather(*noise)
        return times


def _commits(db: Database, due: dict[int, float], count: int) -> None:
    """Schedules `count` jobs, one commit each, SPACING apart, each due 0-3 ms later."""
    for _ in range(count):
        with db.write() as conn:
            at = conn.now() + timedelta(milliseconds=random.uniform(0, 3))
            job_id = jobs.schedule(conn, "tick", at)
        due[job_id] = at.timestamp()
        time.sleep(SPACING)


async def runner_lateness(path: Path, count: int) -> list[float]:
    """How late (s) each of `count` jobs ran on the wall clock; GIVE_UP for one that never did."""
    ran: dict[int, float] = {}
    handlers = JobHandlers()

    @handlers.handler("tick")
    def tick(job: Job, conn: Conn, _: RunContext) -> None:
        ran[job.id] = time.time()

    db = Database(path)
    runner = Runner(db, WallClock(), handlers)
    await runner.start()
    due: dict[int, float] = {}
    writer = threading.Thread(target=_commits, args=(db, due, count))
    writer.start()
    while writer.is_alive():
        await asyncio.sleep(0.05)
    await asyncio.sleep(2)  # the last one's chance
    await runner.stop()
    db.close()
    return [ran[j] - at if j in ran else GIVE_UP for j, at in due.items()]


def _report(label: str, times: list[float], what: str = "time to terminal") -> None:
    times = sorted(times)
    limit = LATE if what == "lateness" else STUCK
    stuck = sum(t > limit for t in times)
    print(
        f"  {label}: {len(times)}, {what} median {statistics.median(times):.3f} s, "
        f"p95 {times[int(len(times) * 0.95) - 1]:.3f} s, max {times[-1]:.3f} s; "
        f"longer than {limit:g} s: {stuck}"
    )


def main() -> None:
    alone = int(sys.argv[1]) if len(sys.argv) > 1 else ALONE
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else ROUNDS
    wave = int(sys.argv[3]) if len(sys.argv) > 3 else WAVE
    print("stuck executions: the runner's jobs, and support-agent, on the real clock")
    with tempfile.TemporaryDirectory() as tmp:
        lateness = asyncio.run(runner_lateness(Path(tmp) / "r.db", JOBS))
        _report("runner, jobs due just after the commit that wakes it", lateness, "lateness")
    with tempfile.TemporaryDirectory() as tmp, running_service(Path(tmp) / "s.db") as svc:
        _report("alone", asyncio.run(stress(svc.base, alone, 1)))
        _report(f"{wave} at a time", asyncio.run(stress(svc.base, rounds, wave)))


if __name__ == "__main__":
    main()
