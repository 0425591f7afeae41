"""Moving the manual clock through agentform's own operations (/agentform/v1/clock):
by a duration, or until a batch or an execution reaches a status, stopping at the
moment it does; what a mistake says; who may move it. One app for the module, on a
manual clock (the batch seed: `worker` runs 90 s)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from agentform.rules.clock import ClockWordsError, parse_condition
from agentform.service.runtime.advancing import NothingToWaitFor, advance
from agentform.service.store.database import iso
from tests.service.batches.support import (
    BATCH_READ_KEY,
    FOREIGN_KEY,
    WORKER_SECONDS,
    at,
    batch_body,
    create,
    get,
)
from tests.service.conftest import Api, assert_error

CLOCK = "/agentform/v1/clock"


def own(api: Api, method: str, path: str, key: str | None = None, **kw: Any) -> httpx.Response:
    """A request to agentform's own operations (outside the API's base path)."""
    headers = {"X-Api-Key": key or str(api.key)}
    response: httpx.Response = api.client.request(method, path, headers=headers, **kw)
    return response


def move(api: Api, key: str | None = None, **body: str) -> dict[str, Any]:
    r = own(api, "POST", f"{CLOCK}/advance", key, json=body)
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    return answer


def test_the_clock_says_its_time_and_kind(app: FastAPI, api: Api) -> None:
    r = own(api, "GET", CLOCK, BATCH_READ_KEY)
    assert r.json() == {"now": iso(app.state.clock.now()), "kind": "manual"}


def test_a_duration_moves_the_clock_by_that_much(app: FastAPI, api: Api) -> None:
    before = app.state.clock.now()
    answer = move(api, duration="1h30m")
    assert answer["advancedSeconds"] == 5400
    assert (app.state.clock.now() - before).total_seconds() == 5400
    assert answer == {
        "now": iso(app.state.clock.now()),
        "advancedSeconds": 5400,
        "until": None,
        "met": None,
        "status": None,
    }


def test_until_a_batch_completes_stops_at_the_moment_it_does(
    app: FastAPI, api: Api, agents: dict[str, str]
) -> None:
    # 25 items, 10 each minute from a minute on: the last slice falls due at +180 s.
    items = [{"inputs": {"n": i}} for i in range(25)]
    create(api, batch_body(agents["worker"], "nightly", startAt=at(app, 60), items=items))
    answer = move(api, until="batches/worker/nightly is completed", within="1d")
    assert answer["met"] is True and answer["status"] == "completed"
    assert answer["advancedSeconds"] == 180
    assert answer["until"] == "batches/worker/nightly is completed"


def test_until_an_execution_completes_with_the_agents_id_too(
    app: FastAPI, api: Api, agents: dict[str, str]
) -> None:
    execution = api.post(f"/agents/{agents['worker']}/execute", json={}).json()["executionId"]
    answer = move(api, until=f"executions/{execution} is completed")
    assert answer["met"] is True and answer["advancedSeconds"] == WORKER_SECONDS
    batch = create(api, batch_body(agents["worker"], "by-id", startAt=at(app, 30)))
    answer = move(api, until=f"batches/{agents['worker']}/by-id is finished")
    assert answer["met"] is True and get(api, batch["id"])["status"] == "completed"


def test_a_condition_not_met_within_the_window_leaves_time_at_its_end(
    app: FastAPI, api: Api, agents: dict[str, str]
) -> None:
    create(api, batch_body(agents["worker"], "later", startAt=at(app, 86_400)))
    before = app.state.clock.now()
    answer = move(api, until="batches/worker/later is running", within="2h")
    assert answer["met"] is False and answer["status"] == "pending"
    assert answer["advancedSeconds"] == 7200
    assert (app.state.clock.now() - before).total_seconds() == 7200


def test_a_condition_on_nothing_is_refused_and_the_clock_stays(app: FastAPI, api: Api) -> None:
    """A manual clock never goes back: a typo in the name must not cost a day."""
    before = app.state.clock.now()
    r = own(
        api, "POST", f"{CLOCK}/advance", None, json={"until": "batches/worker/never is running"}
    )
    assert_error(r, 404, "no batch 'worker/never' in this organization")
    assert app.state.clock.now() == before


def test_a_condition_sees_the_callers_organization_only(
    app: FastAPI, api: Api, agents: dict[str, str]
) -> None:
    create(api, batch_body(agents["worker"], "ours", startAt=at(app, 10)))
    move(api, duration="1m")
    body = {"until": "batches/worker/ours is completed", "within": "1s"}
    theirs = own(api, "POST", f"{CLOCK}/advance", FOREIGN_KEY, json=body)
    assert_error(theirs, 404, "no batch 'worker/ours' in this organization")
    assert move(api, until="batches/worker/ours is completed", within="0")["met"] is True


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"duration": "90"}, "duration: '90' is not a duration such as 90s"),
        ({"until": "batch/a/b is completed"}, "(did you mean 'batches'?)"),
        ({"until": "batches/a/b is complete"}, "(did you mean 'completed'?)"),
        ({"until": "batches/a/b is completed", "within": "soon"}, "within: 'soon'"),
        ({"duration": "1s", "until": "batches/a/b is completed"}, "either duration or until"),
        ({}, "either duration or until"),
        ({"duration": "1s", "within": "1d"}, "within: goes with until"),
        ({"duration": "1s", "by": "x"}, "unknown field"),
    ],
)
def test_words_that_cannot_be_read_are_a_400_saying_what_is_accepted(
    api: Api, body: dict[str, str], words: str
) -> None:
    assert_error(own(api, "POST", f"{CLOCK}/advance", json=body), 400, words)


def test_moving_the_clock_needs_an_admin_key(api: Api) -> None:
    assert_error(own(api, "POST", f"{CLOCK}/advance", BATCH_READ_KEY, json={"duration": "1s"}), 403)
    assert_error(api.client.post(f"{CLOCK}/advance", json={"duration": "1s"}), 401)
    assert_error(own(api, "GET", CLOCK, "not-a-key-at-all"), 401)


def test_the_python_api_moves_the_clock_as_the_route_does(app: FastAPI, api: Api) -> None:
    portal = api.client.portal
    assert portal is not None
    before = app.state.clock.now()
    result = portal.call(lambda: advance(app.state, seconds=30))
    assert result.advanced == 30 and result.met is None and result.now == app.state.clock.now()
    assert (result.now - before).total_seconds() == 30
    until = parse_condition("batches/worker/nothing-by-this-name is pending")
    with pytest.raises(NothingToWaitFor, match="no batch 'worker/nothing-by-this-name'"):
        portal.call(lambda: advance(app.state, until=until, within=5))
    assert app.state.clock.now() == result.now
    with pytest.raises(ClockWordsError, match="a duration or a condition"):
        portal.call(lambda: advance(app.state))
