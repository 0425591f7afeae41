"""Delivery worker processes (`service run --delivery-workers 2`) on one database,
on the manual clock shared through it (docs/service/internals.md#scaling): a
lane's deliveries arrive in order; a worker killed with -9 mid-delivery loses
nothing and reorders nothing; a service killed with -9 leaves no orphan and no
delivery sent twice; the fair shares hold across the workers. Receivers on loopback."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentform.service.delivery.fairness import INTEGRATION_SHARE
from tests.service.test_server import running
from tests.webhooks.receiver import HANG, Receiver, running_receiver

pytestmark = [pytest.mark.server, pytest.mark.slow]

STEPS = 2
PER_EXECUTION = 2 + 3 * STEPS  # STARTED; per step 3; COMPLETED
SCRIPT = {
    "steps": [{"message": f"step {n}", "duration": 1} for n in range(1, STEPS + 1)],
    "end": {"result": {}, "reasoning": "done", "outcome": "success"},
}
KEYS = {"a": "a-admin-key", "b": "b-admin-key"}
SEED = {
    "organizations": [
        {
            "name": org,
            "maxConcurrentExecutions": 100,
            "apiKeys": [{"name": "admin", "key": key, "role": "admin"}],
            "agents": [{"name": "steps", "script": SCRIPT}],
        }
        for org, key in KEYS.items()
    ]
}


class Service:
    """A running `service run --clock manual --delivery-workers 2` and its workers' pids."""

    def __init__(self, base: str, process: Any, pids: list[int], db: Path) -> None:
        self.base, self.process, self.pids, self.db = base, process, pids, db

    def api(self, org: str) -> httpx.Client:
        return httpx.Client(base_url=self.base, headers={"X-Api-Key": KEYS[org]}, timeout=120)

    def advance(self, duration: str = "2m") -> None:
        root = self.base.removesuffix("/agents/v2")
        moved = httpx.post(
            f"{root}/agentform/v1/clock/advance",
            json={"duration": duration},
            headers={"X-Api-Key": KEYS["a"]},
            timeout=300,
        )
        assert moved.status_code == 200, moved.text

    def rows(self, sql: str, *args: object) -> list[tuple[Any, ...]]:
        with sqlite3.connect(self.db) as conn:
            return conn.execute(sql, args).fetchall()

    def claimant_pid(self) -> int:
        """The pid of the worker holding a claim on a pending delivery job."""
        held = self.rows(
            "SELECT claimed_by FROM jobs WHERE kind = 'webhook.delivery' "
            "AND status = 'pending' AND claimed_by IS NOT NULL"
        )
        assert held, "no delivery in flight"
        return self.pids[int(held[0][0].split("-")[0]) - 1]


@contextmanager
def served(tmp_path: Path, clock: str = "manual") -> Iterator[Service]:
    seed = tmp_path / "seed.yaml"
    seed.write_text(json.dumps(SEED))  # JSON is YAML
    db = tmp_path / "svc.db"
    args = ("--db", str(db), "--seed", str(seed), "--clock", clock, "--delivery-workers", "2")
    with running(*args) as (base, proc):
        assert proc.stdout is not None
        line = ""
        while not line.startswith("delivery workers: 2"):
            line = proc.stdout.readline()
            assert line, "the service stopped before starting its workers"
        pids = [int(pid) for pid in line.split("(pids ")[1].rstrip(")\n").split()]
        yield Service(base, proc, pids, db)


def hooked(api: httpx.Client, url: str) -> str:
    """The org's agent, attached to a new integration sending every event to `url`."""
    agent = api.get("/agents").json()["items"][0]["id"]
    made = api.post("/webhook-integrations", json={"name": "hook", "url": url})
    assert made.status_code == 201, made.text
    put = api.put(f"/agents/{agent}/webhooks/{made.json()['id']}", json={"eventRules": ["*"]})
    assert put.status_code == 200, put.text
    return str(agent)


def execute(api: httpx.Client, agent: str, count: int) -> list[str]:
    return [
        api.post(f"/agents/{agent}/execute", json={}).json()["executionId"] for _ in range(count)
    ]


def received_lanes(receiver: Receiver) -> dict[str, list[str]]:
    """The event ids each execution's notifications carried, in the order received."""
    lanes: dict[str, list[str]] = {}
    for got in receiver.received:
        body = got.json()
        lanes.setdefault(body["info"]["execution_id"], []).append(body["event_id"])
    return lanes


def stored_lanes(service: Service) -> dict[str, list[str]]:
    """The event id of each execution's deliveries, in the order they were written."""
    lanes: dict[str, list[str]] = {}
    for execution, event_id in service.rows(
        "SELECT execution_id, event_id FROM webhook_deliveries ORDER BY id"
    ):
        lanes.setdefault(execution, []).append(event_id)
    return lanes


def in_background(service: Service, duration: str = "2m", killed: bool = False) -> threading.Thread:
    """`advance` in a thread: it returns once what falls due has been delivered
    (`killed`: or when the service is killed under it)."""

    def advance() -> None:
        try:
            service.advance(duration)
        except httpx.TransportError:
            if not killed:
                raise

    thread = threading.Thread(target=advance, daemon=True)
    thread.start()
    return thread


def alive(pid: int) -> bool:
    """Whether the process runs (a zombie no longer does: its parent was killed)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


def exited(pids: list[int], patience: float = 60) -> bool:
    """Waits (really, at most `patience` s) for processes we are not the parent of."""
    ended = threading.Event()
    while any(alive(pid) for pid in pids) and patience > 0:
        ended.wait(0.1)
        patience -= 0.1
    return not any(alive(pid) for pid in pids)


def test_two_workers_deliver_each_lane_in_order(tmp_path: Path) -> None:
    with running_receiver() as receiver, served(tmp_path) as service:
        with service.api("a") as api:
            execute(api, hooked(api, receiver.url), 12)
        service.advance("2m")  # returns once every delivery due on the way is recorded
        assert len(receiver.received) == 12 * PER_EXECUTION
        assert received_lanes(receiver) == stored_lanes(service)
        statuses = service.rows("SELECT DISTINCT status FROM webhook_deliveries")
        assert statuses == [("delivered",)]
        # the workers stamp their attempts with the service's manual clock (whole
        # seconds from its start: the steps last 1 s), not with their own time
        moments = service.rows("SELECT DISTINCT attempted_at FROM webhook_attempts")
        assert moments and all(at.endswith(".000000Z") for (at,) in moments), moments
        # every delivery job was run by a worker (a claim), none by the service itself
        senders = service.rows(
            "SELECT DISTINCT substr(claimed_by, 1, 1) FROM jobs "
            "WHERE kind = 'webhook.delivery' AND status = 'done'"
        )
        assert {s for (s,) in senders} <= {"1", "2"} and senders


def test_a_worker_killed_mid_delivery_loses_nothing_and_keeps_the_order(tmp_path: Path) -> None:
    with running_receiver() as receiver, served(tmp_path) as service:
        receiver.answer(HANG)  # the first attempt hangs: its worker is mid-delivery
        with service.api("a") as api:
            (execution,) = execute(api, hooked(api, receiver.url), 1)
        moving = in_background(service)
        receiver.wait_for(1)
        victim = service.claimant_pid()
        os.kill(victim, signal.SIGKILL)
        moving.join(120)  # another worker takes the lane and sends it all
        assert not moving.is_alive()
        stored = stored_lanes(service)[execution]
        got = received_lanes(receiver)[execution]
        assert got == [stored[0], *stored]  # the one unanswered is sent again, then the rest
        assert not alive(victim)
        out = ""
        while "started another" not in out:
            out = service.process.stdout.readline()
        assert out.startswith("delivery worker ") and "(code -9)" in out
        receiver.release.set()


def test_a_service_killed_leaves_no_orphan_and_sends_nothing_twice(tmp_path: Path) -> None:
    with running_receiver() as receiver:
        receiver.answer(HANG)
        with served(tmp_path) as service:
            with service.api("a") as api:
                execute(api, hooked(api, receiver.url), 4)
            in_background(service, "10s", killed=True)
            receiver.wait_for(1)
            pids = service.pids
            os.kill(service.process.pid, signal.SIGKILL)
            service.process.wait(30)
            receiver.release.set()  # the hung attempt is answered: its worker records it
            assert exited(pids)  # their pipe closed: they drain and exit
        with served(tmp_path) as restarted:
            restarted.advance("2m")
            stored = stored_lanes(restarted)
        got = received_lanes(receiver)
        assert got == stored  # each once, in order: nothing sent twice
        assert sum(map(len, got.values())) == 4 * PER_EXECUTION


def test_fair_shares_hold_across_workers(tmp_path: Path) -> None:
    with (
        running_receiver(default=HANG) as dead,
        running_receiver() as healthy,
        served(tmp_path) as service,
    ):
        with service.api("a") as a, service.api("b") as b:
            execute(a, hooked(a, dead.url), 3 * INTEGRATION_SHARE)
            execute(b, hooked(b, healthy.url), 4)
        moving = in_background(service, "1s")
        # b's notifications arrive while a's receiver answers nobody; a's hung attempts
        # are its integration's share, across both workers (each has 128 slots)
        healthy.wait_for(4)
        dead.wait_for(INTEGRATION_SHARE)
        held = service.rows(
            "SELECT count(*) FROM jobs WHERE status = 'pending' AND claimed_by IS NOT NULL "
            "AND json_extract(payload, '$.org') = (SELECT id FROM organizations WHERE name = 'a')"
        )
        assert len(dead.received) == INTEGRATION_SHARE
        assert held == [(INTEGRATION_SHARE,)]
        dead.release.set()
        moving.join(120)
        assert not moving.is_alive()


def test_a_webhook_test_answers_the_attempt_a_worker_made(tmp_path: Path) -> None:
    with running_receiver() as receiver, served(tmp_path, clock="wall") as service:
        with service.api("a") as api:
            made = api.post("/webhook-integrations", json={"name": "hook", "url": receiver.url})
            tested = api.post(f"/webhook-integrations/{made.json()['id']}/test")
        assert tested.status_code == 200, tested.text
        assert tested.json()["status"] == "delivered"
        assert tested.json()["responseStatus"] == 204
        assert receiver.events() == ["EXECUTION_TEST"]
