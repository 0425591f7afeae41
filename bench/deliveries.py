"""Benchmark: webhook deliveries of 1,000 executions of a 10-step script, one
attachment taking every event, sent to a receiver on loopback, on the real clock.

The service runs as `agentform service run` (uvicorn, wall clock) and the receiver
as its own process, both on this machine. Prints events emitted per second,
deliveries per second, the p50/p99 time from an event to its receipt, and the
signing cost per delivery next to a bare RSA-2048 sign measured in the same run.

The two goals, side by side with a plain-POST loop in the same run:
- deliveries/s against plain POSTs/s to the same receiver at the same
  concurrency (an integration's share of the delivery slots), goal >= 0.8.
  Measured on a backlog: the service is stopped, every delivery of the run is
  resent into the outbox (as `webhook resend` would, after an outage), and the
  restarted service drains it. While executions run, one process both emits the
  events and sends them, so the rate of that phase (printed too) says how fast
  the two together go, not what the outbox costs;
- event -> receipt p99 when events are emitted at half the delivery rate just
  measured (executions started at a steady pace for `PACED_SECONDS`), goal <= 1 s.

    .venv/bin/python bench/deliveries.py [EXECUTIONS]
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

KEY = "bench-admin-key"
STEPS = 10
PER_EXECUTION = 2 + 3 * STEPS  # STARTED; STEP_STARTED, MESSAGE_ADDED, STEP_PROCESSED; COMPLETED
SCRIPT = {
    "steps": [
        {"message": f"step {n} of {{{{ inputs.order }}}}", "duration": 0.05}
        for n in range(1, STEPS + 1)
    ],
    "end": {"result": {"order": "{{ inputs.order }}"}, "reasoning": "done", "outcome": "success"},
}
SEED = {
    "organizations": [
        {
            "name": "bench",
            "maxConcurrentExecutions": 1000,
            "apiKeys": [{"name": "admin", "key": KEY, "role": "admin"}],
            "agents": [
                {"name": "ten-steps", "script": SCRIPT},  # one attachment takes every event
                {"name": "no-webhooks", "script": SCRIPT},  # the same, for comparison
            ],
        }
    ]
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(url: str, headers: dict[str, str] | None = None) -> None:
    for _ in range(400):
        try:
            httpx.get(url, headers=headers, timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.05)
    raise RuntimeError(f"{url} did not come up")


@dataclass(frozen=True)
class Places:
    """Where one run's files, service and receiver are."""

    seed: Path
    db: Path
    service_port: int
    receiver_port: int
    base: str
    receiver: str


def places(tmp: str) -> Places:
    """A run's places under `tmp`, its seed written there."""
    seed = Path(tmp) / "seed.yaml"
    seed.write_text(json.dumps(SEED))  # JSON is YAML
    service_port, receiver_port = free_port(), free_port()
    base = f"http://127.0.0.1:{service_port}/agents/v2"
    receiver = f"http://127.0.0.1:{receiver_port}"
    return Places(seed, Path(tmp) / "bench.db", service_port, receiver_port, base, receiver)


def resend_everything(db_path: Path, limit: int = -1) -> int:
    """With the service stopped: a new delivery of every delivery in the database
    (the first `limit` of them, when given; the service's own resend), so the next
    start has them all as a backlog."""
    from agentform.service.delivery.resend import resend
    from agentform.service.store.database import Database

    db = Database(db_path)
    with db.write() as conn:
        rows = conn.execute(
            "SELECT organization_id, id FROM webhook_deliveries ORDER BY rowid LIMIT ?", (limit,)
        ).fetchall()
        for org, delivery in rows:
            resend(conn, org, delivery)
    return len(rows)


def service(port: int, db: Path, seed: Path) -> list[str]:
    return [
        "-m",
        "agentform",
        "service",
        "run",
        "--port",
        str(port),
        "--db",
        str(db),
        "--seed",
        str(seed),
    ]


@contextmanager
def process(*args: str) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen([sys.executable, *args], stdout=subprocess.DEVNULL)
    try:
        yield proc
    finally:
        proc.terminate()
        proc.wait(10)


async def run_executions(base: str, agent: str, count: int) -> float:
    """Starts `count` executions (16 requests at a time); returns how long that took."""
    started = time.perf_counter()
    async with httpx.AsyncClient(base_url=base, headers={"X-Api-Key": KEY}, timeout=30) as api:
        limit = asyncio.Semaphore(16)

        async def one(i: int) -> None:
            async with limit:
                r = await api.post(f"/agents/{agent}/execute", json={"inputs": {"order": f"O-{i}"}})
                r.raise_for_status()

        await asyncio.gather(*(one(i) for i in range(count)))
    return time.perf_counter() - started


def received(receiver: str) -> list[list[Any]]:
    return httpx.get(f"{receiver}/records", timeout=30).json()  # type: ignore[no-any-return]


def wait_until(receiver: str, count: int, patience: float = 600) -> list[list[Any]]:
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        if httpx.get(f"{receiver}/count", timeout=30).json() >= count:
            return received(receiver)
        time.sleep(0.5)
    raise RuntimeError(f"only {len(received(receiver))} of {count} deliveries arrived")


def signing_costs(rounds: int = 2000) -> tuple[float, float]:
    """(ms per delivery signature as the service makes it, ms per bare RSA-2048 sign)."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    from agentform.rules.signatures import generate_key_pair, sign
    from agentform.service.delivery.envelope import encode, execution_envelope

    pair = generate_key_pair()
    body = encode(
        execution_envelope(
            "EXECUTION_MESSAGE_ADDED",
            event_id="5f0b1c9e-8d7a-4f8e-9a51-3c2b1d0e9f87",
            timestamp="2026-01-01T00:00:00.000000Z",
            execution_id="2b7e9c4a-0d1f-4e3b-8a6c-9f5d2e1b0a47",
            agent_id="8c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f",
            agent_name="ten-steps",
            payload={"message": "step 7 of O-123"},
            metadata=None,
            platform_url="http://127.0.0.1:8700/agents/v2",
        )
    )
    key = load_pem_private_key(pair.private_pem.encode(), None)
    timings: dict[str, list[float]] = {"ours": [], "bare": []}
    for _ in range(3):  # interleaved, so both see the same machine
        t = time.perf_counter()
        for _ in range(rounds):
            sign(body, pair.private_pem)
        timings["ours"].append((time.perf_counter() - t) / rounds * 1000)
        t = time.perf_counter()
        for _ in range(rounds):
            key.sign(body, padding.PKCS1v15(), hashes.SHA256())  # type: ignore[union-attr, call-arg]
        timings["bare"].append((time.perf_counter() - t) / rounds * 1000)
    return min(timings["ours"]), min(timings["bare"])


def percentile(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


async def bare_posts(url: str, count: int, concurrency: int = 32) -> float:
    """POSTs/s of a plain client to the same receiver: the floor of the HTTP part."""
    body = (
        b'{"type":"execution","event_id":"e","timestamp":"2026-01-01T00:00:00Z",'
        b'"info":{"event":"EXECUTION_STARTED","execution_id":"x","payload":{}}}'
    )
    async with httpx.AsyncClient(timeout=30) as client:
        limit = asyncio.Semaphore(concurrency)

        async def one() -> None:
            async with limit:
                try:
                    answer = await client.post(url, content=body)
                except httpx.TransportError:  # a kept-alive connection closed under it
                    answer = await client.post(url, content=body)
                answer.raise_for_status()

        started = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(count)))
        return count / (time.perf_counter() - started)


def events_per_second(api: httpx.Client, agent: str) -> float:
    """Events/s of the executions of `agent`, from their start and end times."""
    starts, ends, page = [], [], 1
    while True:
        body = api.get("/executions", params={"agentId": agent, "page": page, "pageSize": 100})
        items = body.json()["items"]
        if not items:
            break
        starts += [i["startedAt"] for i in items]
        ends += [i["terminalAt"] for i in items]
        page += 1
    span = (parse(max(ends)) - parse(min(starts))).total_seconds()
    return len(starts) * PER_EXECUTION / span


def parse(text: str) -> datetime:
    return datetime.fromisoformat(text)


def completed(api: httpx.Client, agent: str) -> int:
    params = {"agentId": agent, "status": "completed", "pageSize": 1}
    return int(api.get("/executions", params=params).json()["total"])


PACED_SECONDS = 10.0


async def paced_executions(base: str, agent: str, events_per_second: float) -> int:
    """Starts executions at a steady pace, so events are emitted at about
    `events_per_second`, for PACED_SECONDS; returns how many were started."""
    per_second = max(0.5, events_per_second / PER_EXECUTION)
    count = max(1, int(per_second * PACED_SECONDS))
    async with httpx.AsyncClient(base_url=base, headers={"X-Api-Key": KEY}, timeout=30) as api:
        started = time.perf_counter()
        calls = []
        for i in range(count):
            await asyncio.sleep(max(0.0, started + i / per_second - time.perf_counter()))
            body = {"inputs": {"order": f"P-{i}"}}
            calls.append(asyncio.ensure_future(api.post(f"/agents/{agent}/execute", json=body)))
        for answer in await asyncio.gather(*calls):
            answer.raise_for_status()
    return count


def rate_of(records: list[list[Any]]) -> float:
    """Deliveries per second, from the first receipt to the last."""
    receipts = sorted(r[0] for r in records)
    return len(records) / (receipts[-1] - receipts[0])


def main() -> None:
    from agentform.service.delivery.fairness import INTEGRATION_SHARE

    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    with tempfile.TemporaryDirectory() as tmp:
        run = places(tmp)
        base, receiver, here = run.base, run.receiver, Path(__file__).parent
        with process(str(here / "_receiver.py"), str(run.receiver_port)):
            wait_for(f"{receiver}/records")
            with process(*service(run.service_port, run.db, run.seed)):
                wait_for(f"{base}/context", {"X-Api-Key": KEY})
                api = httpx.Client(base_url=base, headers={"X-Api-Key": KEY}, timeout=30)
                agents = {a["name"]: a["id"] for a in api.get("/agents").json()["items"]}
                quiet, hooked = agents["no-webhooks"], agents["ten-steps"]

                # 1. The same executions with no attachment: how fast events are emitted.
                asyncio.run(run_executions(base, quiet, count))
                while completed(api, quiet) < count:
                    time.sleep(0.5)
                quiet_rate = events_per_second(api, quiet)

                # 2. One attachment taking every event: emitted and sent at once.
                hook = api.post(
                    "/webhook-integrations", json={"name": "bench", "url": f"{receiver}/hook"}
                )
                api.put(
                    f"/agents/{hooked}/webhooks/{hook.json()['id']}", json={"eventRules": ["*"]}
                )
                total = count * PER_EXECUTION
                t0 = time.time()
                submit = asyncio.run(run_executions(base, hooked, count))
                records = wait_until(receiver, total)
                wall = time.time() - t0
                done = completed(api, hooked)
                hooked_rate = events_per_second(api, hooked)
                api.close()
                mixed_rate = rate_of(records)

            # 3. The outbox alone: every delivery resent while the service is stopped,
            # drained by the restarted service; and, just after, a plain client posting
            # to the same receiver at the concurrency one integration's deliveries get.
            backlog = resend_everything(run.db)
            httpx.post(f"{receiver}/reset", timeout=30)
            with process(*service(run.service_port, run.db, run.seed)):
                drained = wait_until(receiver, backlog)
                bare_rate = asyncio.run(
                    bare_posts(f"{receiver}/hook", min(backlog, 5000), INTEGRATION_SHARE)
                )
                delivery_rate = rate_of(drained)

                # 4. Events emitted at half the delivery rate: how long each waits.
                httpx.post(f"{receiver}/reset", timeout=30)
                paced = asyncio.run(paced_executions(base, hooked, delivery_rate / 2))
                paced_records = wait_until(receiver, paced * PER_EXECUTION)
    ours, bare = signing_costs()
    latency = [(r[0] - r[1]) * 1000 for r in records]
    paced_latency = [(r[0] - r[1]) * 1000 for r in paced_records]
    load = os.getloadavg()[0]
    p50, p99 = percentile(latency, 50), percentile(latency, 99)
    paced_p50, paced_p99 = percentile(paced_latency, 50), percentile(paced_latency, 99)
    rows = [
        f"{count} executions x {STEPS} steps, {PER_EXECUTION} events each: {done} completed;",
        f"  started in {submit:.1f} s; {len(records)} of {total} deliveries in {wall:.1f} s",
        f"events emitted, one attachment:   {hooked_rate:8.0f} /s",
        f"events emitted, no attachment:    {quiet_rate:8.0f} /s"
        f"   ratio {hooked_rate / quiet_rate:.2f}",
        f"deliveries received while emitted: {mixed_rate:7.0f} /s   (one process does both)",
        f"a backlog of {backlog} drained:     {delivery_rate:8.0f} /s",
        f"plain POSTs to the same receiver: {bare_rate:8.0f} /s"
        f"   ratio {delivery_rate / bare_rate:.2f}   (goal >= 0.80;"
        f" both {INTEGRATION_SHARE} at a time)",
        f"event -> receipt, backlog: p50 {p50:.0f} ms, p99 {p99:.0f} ms, max {max(latency):.0f} ms",
        f"event -> receipt at half the delivery rate ({delivery_rate / 2:.0f} events/s, "
        f"{len(paced_records)} deliveries): p50 {paced_p50:.0f} ms, p99 {paced_p99:.0f} ms"
        f"   (goal p99 <= 1000 ms)",
        f"signing a delivery: {ours:.3f} ms (agentform.rules.signatures.sign, typical body)",
        f"bare RSA-2048 sign: {bare:.3f} ms (cryptography, same run)   ratio {ours / bare:.2f}",
        f"signing at the delivery rate: {delivery_rate * ours / 1000:.0%} of one core",
        f"machine: {os.cpu_count()} cores, load average {load:.1f} at the end of the run",
    ]
    print("\n".join(rows))


if __name__ == "__main__":
    main()
