"""Capacity (docs/service/contract.md#execute-request): a maximum of concurrent
executions per organization, 409 at capacity unless `onCapacityLimit: "queue"`, queued
ones start oldest first, and a pool whose every profile is in use is at capacity unless
it allows concurrent use."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from fastapi import FastAPI

from agentform.rules.execute import ExecuteRequest
from agentform.service.executions import capacity, lifecycle
from agentform.service.store.database import Conn
from tests.service.conftest import Api, assert_error
from tests.service.execution_support import (
    SMALL_KEY,
    event_names,
    execute,
    module_app,
    service,
    status_of,
)

Advance = Callable[[float], None]


app = module_app("capacity")


@pytest.fixture(scope="module")
def svc(app: FastAPI) -> Iterator[tuple[Api, Advance]]:
    with service(app, SMALL_KEY) as running:
        yield running


@pytest.fixture
def api(svc: tuple[Api, Advance]) -> Iterator[Api]:
    yield svc[0]
    for status in ("queued", "starting", "running", "paused"):  # a clean organization
        for item in svc[0].get("/executions", params={"status": status}).json()["items"]:
            svc[0].post(f"/executions/{item['id']}/cancel")


@pytest.fixture(scope="module")
def advance(svc: tuple[Api, Advance]) -> Advance:
    return svc[1]


@pytest.fixture(scope="module")
def agent(svc: tuple[Api, Advance]) -> str:
    return svc[0].ids("/agents")["steady"]


@pytest.fixture(scope="module")
def profiles(svc: tuple[Api, Advance]) -> dict[str, str]:
    return svc[0].ids("/profiles")


def count(app: FastAPI) -> int:
    with app.state.db.read() as conn:
        return int(conn.execute("SELECT count(*) FROM executions").fetchone()[0])


def pool(api: Api, name: str, members: list[str], **settings: object) -> str:
    pool_id = api.post("/agent-profile-pools", json={"name": name, **settings}).json()["id"]
    api.post(f"/agent-profile-pools/{pool_id}/members", json={"profileIds": members})
    return str(pool_id)


def test_at_capacity_an_execute_is_409_and_writes_nothing(
    app: FastAPI, api: Api, agent: str
) -> None:
    execute(api, agent)
    execute(api, agent)
    before = count(app)
    assert_error(api.post(f"/agents/{agent}/execute", json={}), 409, "2", "queue")
    assert count(app) == before


def test_queue_waits_and_starts_oldest_first_when_capacity_frees(
    app: FastAPI, api: Api, advance: Advance, agent: str
) -> None:
    first, second = execute(api, agent), execute(api, agent)
    advance(0)
    r = api.post(f"/agents/{agent}/execute", json={"onCapacityLimit": "queue"})
    assert r.status_code == 202 and r.json()["status"] == "queued"
    older = r.json()["executionId"]
    younger = execute(api, agent, onCapacityLimit="queue")
    queued = api.get(f"/executions/{older}").json()
    assert queued["status"] == "queued" and "startedAt" not in queued
    assert event_names(app, older) == []
    api.post(f"/executions/{first}/cancel")
    assert status_of(api, older) == "starting" and status_of(api, younger) == "queued"
    advance(0)
    assert event_names(app, older)[0] == "EXECUTION_STARTED"
    advance(3)  # `second` and `older` complete: `younger` gets a turn
    assert status_of(api, second) == "completed"
    assert status_of(api, younger) in ("starting", "running")


def test_a_paused_execution_holds_its_capacity(api: Api, advance: Advance, agent: str) -> None:
    first = execute(api, agent)
    execute(api, agent)
    advance(0.5)
    api.post(f"/executions/{first}/pause")
    assert_error(api.post(f"/agents/{agent}/execute", json={}), 409)


def test_a_queued_execution_can_be_cancelled_and_never_starts(
    app: FastAPI, api: Api, advance: Advance, agent: str
) -> None:
    first = execute(api, agent)
    execute(api, agent)
    waiting = execute(api, agent, onCapacityLimit="queue")
    assert api.post(f"/executions/{waiting}/cancel").json()["status"] == "cancelled"
    assert event_names(app, waiting) == ["EXECUTION_CANCELLED"]
    api.post(f"/executions/{first}/cancel")
    advance(5)
    assert status_of(api, waiting) == "cancelled"


def test_a_pool_whose_every_profile_is_in_use_is_at_capacity(
    api: Api, advance: Advance, agent: str, profiles: dict[str, str]
) -> None:
    busy = pool(api, "one-member", [profiles["s1"]])
    holder = execute(api, agent, agentProfilePoolId=busy)
    assert api.get(f"/executions/{holder}").json()["agentProfileId"] == profiles["s1"]
    # the organization has room for one more, but the pool has no free profile
    assert_error(api.post(f"/agents/{agent}/execute", json={"agentProfilePoolId": busy}), 409)
    assert api.post(f"/agents/{agent}/execute", json={}).status_code == 202
    api.delete(f"/agent-profile-pools/{busy}")


def test_a_queued_pool_execution_gets_the_profile_that_frees(
    api: Api, advance: Advance, agent: str, profiles: dict[str, str]
) -> None:
    busy = pool(api, "freeing", [profiles["s2"]])
    holder = execute(api, agent, agentProfilePoolId=busy)
    waiting = execute(api, agent, agentProfilePoolId=busy, onCapacityLimit="queue")
    got = api.get(f"/executions/{waiting}").json()
    assert got["status"] == "queued" and "agentProfileId" not in got
    api.post(f"/executions/{holder}/cancel")
    got = api.get(f"/executions/{waiting}").json()
    assert got["status"] == "starting" and got["agentProfileId"] == profiles["s2"]
    api.delete(f"/agent-profile-pools/{busy}")


def test_a_pool_that_allows_concurrent_use_is_never_at_capacity_for_its_profiles(
    api: Api, agent: str, profiles: dict[str, str]
) -> None:
    shared = pool(api, "shared", [profiles["s3"]], allowConcurrentUse=True)
    a = execute(api, agent, agentProfilePoolId=shared)
    b = execute(api, agent, agentProfilePoolId=shared)
    assert {api.get(f"/executions/{e}").json()["agentProfileId"] for e in (a, b)} == {
        profiles["s3"]
    }
    api.delete(f"/agent-profile-pools/{shared}")


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [("least_recently_used", "s2"), ("most_recently_used", "s1")],
)
def test_a_pool_picks_its_free_profile_by_its_selection_strategy(
    api: Api,
    advance: Advance,
    agent: str,
    profiles: dict[str, str],
    strategy: str,
    expected: str,
) -> None:
    members = [profiles["s1"], profiles["s2"]]
    chooser = pool(api, f"pick-{strategy}", members, selectionStrategy=strategy)
    used = execute(api, agent, agentProfileId=profiles["s2"])  # s2 used first...
    advance(1)
    api.post(f"/executions/{used}/cancel")
    used = execute(api, agent, agentProfileId=profiles["s1"])  # ...then s1, more recently
    advance(1)
    api.post(f"/executions/{used}/cancel")
    picked = execute(api, agent, agentProfilePoolId=chooser)
    assert api.get(f"/executions/{picked}").json()["agentProfileId"] == profiles[expected]
    api.delete(f"/agent-profile-pools/{chooser}")


def test_capacity_allows_and_the_listener_hook_serve_batches(
    app: FastAPI, api: Api, advance: Advance, agent: str
) -> None:
    freed: list[str] = []

    @lifecycle.on_capacity_freed
    def _listener(conn: Conn, org_id: str) -> None:
        freed.append(org_id)

    try:
        org = api.get("/context").json()["organizationId"]
        first = execute(api, agent)
        with app.state.db.read() as conn:
            assert capacity.capacity_allows(conn, org, ExecuteRequest())
        execute(api, agent)
        with app.state.db.read() as conn:
            assert not capacity.capacity_allows(conn, org, ExecuteRequest())
        api.post(f"/executions/{first}/cancel")
        assert freed == [org]
    finally:
        lifecycle._capacity_listeners.pop(f"{__name__}.{_listener.__qualname__}")
