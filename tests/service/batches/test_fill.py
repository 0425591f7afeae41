"""Fills on the manual clock: the executions that end together at one moment cause one
fill of their organization (a keyed job, after them), an organization with nothing
waiting schedules none and is filled by nobody else's endings, and a fill's items are
settled with the counters right."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import FastAPI

from tests.service.batches.support import (
    BATCH_KEY,
    SCHED_KEY,
    WORKER_SECONDS,
    at,
    batch_body,
    counts,
    create,
    drained,  # noqa: F401  (autouse)
    get,
)
from tests.service.conftest import Api

Advance = Callable[[float], None]
KEY = SCHED_KEY  # the organization of capacity 4


def fills(app: FastAPI) -> list[str]:
    """The organizations of the fill jobs done so far, in the order they ran."""
    with app.state.db.read() as conn:
        rows = conn.execute(
            "SELECT json_extract(payload, '$.organizationId') FROM jobs"
            " WHERE kind = 'batch.fill' AND status = 'done' ORDER BY finished_at, id"
        )
        return [r[0] for r in rows]


def one_slice(agent: str, name: str, items: int, app: FastAPI) -> dict[str, object]:
    config = {"type": "timeBatching", "batchSize": items, "batchInterval": 60}
    inputs = [{"inputs": {"n": n}} for n in range(items)]
    return batch_body(agent, name, startAt=at(app, 1), config=config, items=inputs)


def test_executions_ending_together_cause_one_fill(
    app: FastAPI, api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    before = len(fills(app))
    batch = create(api, one_slice(agents["instant"], "waves", 12, app))
    advance(30)  # each execution is one short step: three waves of 4
    assert counts(get(api, batch["id"])) == (0, 0, 12, 0, 0)
    assert get(api, batch["id"])["status"] == "completed"
    # The release started 4 (the capacity); each wave of 4 ending at one moment made
    # one fill: 2 for the 8 left, none after the last wave (nothing was waiting).
    assert len(fills(app)) - before == 2


def test_an_organization_with_nothing_waiting_schedules_no_fill(
    app: FastAPI, api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    before = len(fills(app))
    for _ in range(3):
        r = api.post(f"/agents/{agents['instant']}/execute", json={})
        assert r.status_code == 202, r.text
    advance(30)
    assert len(fills(app)) == before


def test_another_organizations_endings_neither_fill_nor_delay_it(
    app: FastAPI, api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    batch = create(api, one_slice(agents["worker"], "slow", 6, app))
    advance(1)  # 4 run for WORKER_SECONDS, 2 wait
    assert counts(get(api, batch["id"])) == (0, 2, 4, 0, 0)
    before = len(fills(app))
    other = api.as_key(BATCH_KEY)
    other_agent = other.ids("/agents")["instant"]
    for _ in range(5):
        assert other.post(f"/agents/{other_agent}/execute", json={}).status_code == 202
    advance(30)  # the other organization's executions end: its capacity, not this one's
    assert counts(get(api, batch["id"])) == (0, 2, 4, 0, 0)
    assert len(fills(app)) == before
    advance(WORKER_SECONDS)  # this organization's 4 end together: one fill starts the 2
    assert counts(get(api, batch["id"])) == (0, 0, 6, 0, 0)
    with app.state.db.read() as conn:
        scheduled = conn.execute("SELECT id FROM organizations WHERE name = 'scheduled'")
        org = scheduled.fetchone()[0]
    assert fills(app)[before:] == [org]
