"""What the batch tests share: a seed (organizations with small capacities, agents that
run a known time), an app on a manual clock, and readers of batches, items and the
database's own view of them (for invariants a client cannot see)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI

from agentform.service import Seed
from agentform.service.runtime import ManualClock
from agentform.service.settings import ServiceSettings
from agentform.service.store import events
from tests.service.conftest import Api
from tests.service.templates import seeded_app

BATCH_ORG = "55555555-5555-4555-8555-555555555555"
BATCH_KEY = "batch-admin-key-0001"
BATCH_READ_KEY = "batch-read-key-0001"
SCHED_KEY = "sched-admin-key-0001"
FOREIGN_KEY = "foreign-admin-key-0001"

WORKER_SECONDS = 90


def _runs_for(seconds: int) -> dict[str, Any]:
    return {"steps": [{"message": "working", "duration": seconds}], "end": {"result": {}}}


def _org(name: str, key: str, capacity: int, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "maxConcurrentExecutions": capacity,
        "apiKeys": [{"name": "admin", "key": key, "role": "admin"}, *extra.pop("keys", [])],
        "agents": [
            {"name": "worker", "script": _runs_for(WORKER_SECONDS)},
            {"name": "instant"},
            {"name": "versioned", "versions": [1, 2, 3], "publishedVersion": 2},
        ],
        "profiles": [{"name": f"{name}-p{i}"} for i in range(1, 4)],
        **extra,
    }


BATCH_SEED = Seed.model_validate(
    {
        "organizations": [
            _org(
                "batchers",
                BATCH_KEY,
                1000,
                id=BATCH_ORG,
                keys=[{"name": "reader", "key": BATCH_READ_KEY, "role": "read"}],
            ),
            _org("scheduled", SCHED_KEY, 4),
            _org("foreign", FOREIGN_KEY, 10),
        ]
    }
)


def make_app(
    directory: Path, seed: Seed = BATCH_SEED, settings: ServiceSettings | None = None
) -> FastAPI:
    return seeded_app(directory / "service.db", seed=seed, clock=ManualClock(), settings=settings)


def now(app: FastAPI) -> datetime:
    moment: datetime = app.state.clock.now()
    return moment


def at(app: FastAPI, seconds: float) -> str:
    """`seconds` from the clock's now, as an ISO 8601 UTC string."""
    return (now(app) + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def batch_body(agent_id: str, name: str, /, **changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "agentId": agent_id,
        "name": name,
        "startAt": "2030-01-01T00:00:00Z",
        "config": {"type": "timeBatching", "batchSize": 10, "batchInterval": 60},
        "items": [{"inputs": {"n": 1}}],
    }
    body.update(changes)
    return body


def create(api: Api, body: dict[str, Any]) -> dict[str, Any]:
    r = api.post("/execution-batches", json=body)
    assert r.status_code == 201, r.text
    created: dict[str, Any] = r.json()
    return created


def get(api: Api, batch_id: str) -> dict[str, Any]:
    r = api.get(f"/execution-batches/{batch_id}")
    assert r.status_code == 200, r.text
    found: dict[str, Any] = r.json()
    return found


COUNTERS = (
    "pendingCount",
    "awaitingCapacityCount",
    "triggeredCount",
    "cancelledCount",
    "failedCount",
)


def counts(batch: dict[str, Any]) -> tuple[int, ...]:
    """(pending, awaiting, triggered, cancelled, failed)."""
    return tuple(batch[c] for c in COUNTERS)


def all_items(api: Api, batch_id: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    page = 1
    while True:
        r = api.get(f"/execution-batches/{batch_id}/items", params={"page": page, "pageSize": 100})
        assert r.status_code == 200, r.text
        body = r.json()
        out += body["items"]
        if page * 100 >= body["total"]:
            return out
        page += 1


def batch_events(app: FastAPI, batch_id: str) -> list[tuple[str, dict[str, Any]]]:
    """The batch's own events (its executions' events carry its id too)."""
    with app.state.db.read() as conn:
        found = events.list_events(conn, batch_id=batch_id)
        return [(e.event, e.payload) for e in found if e.execution_id is None]


def live_executions(app: FastAPI, org_name: str) -> int:
    """Executions of the organization holding capacity right now."""
    with app.state.db.read() as conn:
        row = conn.execute(
            "SELECT count(*) FROM executions e JOIN organizations o ON o.id = e.organization_id "
            "WHERE o.name = ? AND e.status IN "
            "('starting', 'running', 'paused', 'awaiting_confirmation')",
            (org_name,),
        ).fetchone()
        return int(row[0])


def item_statuses_in_db(app: FastAPI, batch_id: str) -> dict[str, int]:
    with app.state.db.read() as conn:
        rows = conn.execute(
            "SELECT status, count(*) FROM execution_batch_items WHERE batch_id = ? GROUP BY status",
            (batch_id,),
        ).fetchall()
        return {r[0]: r[1] for r in rows}


def executions_of_batch(app: FastAPI, batch_id: str) -> list[str]:
    with app.state.db.read() as conn:
        rows = conn.execute("SELECT id FROM executions WHERE batch_id = ?", (batch_id,))
        return [r[0] for r in rows]


@pytest.fixture(autouse=True)
def drained(app: FastAPI, advance: Callable[[float], None]) -> Iterator[None]:
    """Each test starts and ends with no execution of the capacity-4 organization running
    (autouse in a module that imports it)."""
    yield
    advance(10 * WORKER_SECONDS)
    assert live_executions(app, "scheduled") == 0
