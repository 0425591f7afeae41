"""Benchmark: one organization's receivers that never answer, another's that answers.

Organization `noisy` has 40 webhook integrations whose receiver accepts connections
and never answers (each attempt holds its place until the 10 s timeout), all
attached to one agent, and starts executions first: hundreds of hanging lanes.
Organization `calm` has one integration on a receiver that answers 204 at once
and then starts 30 executions. Prints how long `calm`'s notifications took from
event to receipt (p50, p99, max) and how many arrived within 5 s, on the real
clock, with the service as `agentform service run` and the receivers as their
own process and thread.

    .venv/bin/python bench/delivery_fairness.py [NOISY_EXECUTIONS]
"""

from __future__ import annotations

import json
import os
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from deliveries import free_port, percentile, process, received, wait_for

SCRIPT = {
    "steps": [{"message": "one step", "duration": 0.05}],
    "end": {"result": {"ok": True}, "reasoning": "done", "outcome": "success"},
}
PER_EXECUTION = 5  # STARTED; STEP_STARTED, MESSAGE_ADDED, STEP_PROCESSED; COMPLETED
DEAD_INTEGRATIONS = 40
CALM_EXECUTIONS = 30


def org(name: str, key: str, agent: str) -> dict[str, object]:
    return {
        "name": name,
        "maxConcurrentExecutions": 1000,
        "apiKeys": [{"name": "admin", "key": key, "role": "admin"}],
        "agents": [{"name": agent, "script": SCRIPT}],
    }


def never_answering() -> str:
    """A receiver that accepts every connection and never answers; its URL."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4096)
    held: list[socket.socket] = []

    def hold() -> None:
        while True:
            held.append(server.accept()[0])

    threading.Thread(target=hold, daemon=True).start()
    return f"http://127.0.0.1:{server.getsockname()[1]}/hook"


def attach(api: httpx.Client, name: str, url: str, agent: str) -> None:
    made = api.post("/webhook-integrations", json={"name": name, "url": url})
    made.raise_for_status()
    put = api.put(f"/agents/{agent}/webhooks/{made.json()['id']}", json={"eventRules": ["*"]})
    put.raise_for_status()


def start(api: httpx.Client, agent: str, count: int) -> None:
    for i in range(count):
        api.post(f"/agents/{agent}/execute", json={"inputs": {"n": i}}).raise_for_status()


def main() -> None:
    noisy_executions = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    seed = {"organizations": [org("noisy", "noisy-key", "noisy"), org("calm", "calm-key", "calm")]}
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "seed.yaml").write_text(json.dumps(seed))
        service_port, receiver_port = free_port(), free_port()
        base = f"http://127.0.0.1:{service_port}/agents/v2"
        receiver = f"http://127.0.0.1:{receiver_port}"
        dead = never_answering()
        here = Path(__file__).parent
        command = ["-m", "agentform", "service", "run", "--port", str(service_port)]
        command += ["--db", str(Path(tmp) / "b.db"), "--seed", str(Path(tmp) / "seed.yaml")]
        with process(str(here / "_receiver.py"), str(receiver_port)), process(*command):
            wait_for(f"{receiver}/records")
            wait_for(f"{base}/context", {"X-Api-Key": "noisy-key"})
            noisy = httpx.Client(base_url=base, headers={"X-Api-Key": "noisy-key"}, timeout=30)
            calm = httpx.Client(base_url=base, headers={"X-Api-Key": "calm-key"}, timeout=30)
            noisy_agent = noisy.get("/agents").json()["items"][0]["id"]
            calm_agent = calm.get("/agents").json()["items"][0]["id"]
            for n in range(DEAD_INTEGRATIONS):
                attach(noisy, f"dead-{n}", dead, noisy_agent)
            attach(calm, "healthy", f"{receiver}/hook", calm_agent)
            start(noisy, noisy_agent, noisy_executions)
            time.sleep(2)  # the hanging attempts take their places
            start(calm, calm_agent, CALM_EXECUTIONS)
            expected = CALM_EXECUTIONS * PER_EXECUTION
            deadline = time.monotonic() + 120
            while len(received(receiver)) < expected and time.monotonic() < deadline:
                time.sleep(0.5)
            records = received(receiver)
    latency = [r[0] - r[1] for r in records]
    within = sum(1 for s in latency if s <= 5)
    timing = "none arrived within 120 s"
    if latency:
        timing = (
            f"p50 {percentile(latency, 50):.2f} s, p99 {percentile(latency, 99):.2f} s,"
            f" max {max(latency):.2f} s"
        )
    hanging = noisy_executions * PER_EXECUTION * DEAD_INTEGRATIONS
    print(
        f"noisy: {DEAD_INTEGRATIONS} never-answering integrations, {hanging} deliveries queued;"
        f" calm: 1 healthy integration, {expected} deliveries\n"
        f"calm's deliveries received: {len(records)} of {expected}; within 5 s: {within}\n"
        f"calm's event -> receipt: {timing}\n"
        f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end"
    )


if __name__ == "__main__":
    main()
