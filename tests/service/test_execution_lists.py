"""`GET /executions` (docs/service/contract.md#executions, #lists): filters by agent,
status (repeatable), batch and a metadata pair, paging in creation order, the
organization's executions only."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi import FastAPI

from agentform.rules.execute import ExecuteRequest
from agentform.service.executions import lifecycle
from tests.service.conftest import Api, assert_error
from tests.service.execution_support import (
    EXEC_ORG,
    RIVAL_KEY,
    RIVAL_ORG,
    execute,
    module_app,
    service,
)

BATCH = "b0b0b0b0-0000-4000-8000-000000000001"


app = module_app("lists")


@pytest.fixture(scope="module")
def made(app: FastAPI) -> Iterator[tuple[Api, dict[str, list[str]]]]:
    """Seven executions: plain x3 (completed), steady x2 (one cancelled, one running),
    scripted x1 (awaiting confirmation), and one started by a batch."""
    with service(app) as (api, advance):
        agents = api.ids("/agents")
        ids: dict[str, list[str]] = {"plain": [], "steady": [], "scripted": [], "batch": []}
        for n in range(3):
            ids["plain"].append(execute(api, agents["plain"], metadata={"n": str(n)}))
        ids["steady"] = [execute(api, agents["steady"], metadata={"team": "ops"}) for _ in "ab"]
        ids["scripted"].append(execute(api, agents["scripted"], metadata={"team": "ops"}))
        with app.state.db.write() as conn:
            agent = lifecycle.agent_to_run(conn, EXEC_ORG, agents["plain"])
            row = lifecycle.create_execution(
                conn, agent, ExecuteRequest(), created_by=None, batch_id=BATCH
            )
            ids["batch"].append(row.id)
        advance(2)
        api.post(f"/executions/{ids['steady'][0]}/cancel")
        yield api, ids


def listed(api: Api, **params: Any) -> list[str]:
    r = api.get("/executions", params=params)
    assert r.status_code == 200, r.text
    return [i["id"] for i in r.json()["items"]]


def test_all_of_them_in_creation_order_with_the_page_envelope(
    made: tuple[Api, dict[str, list[str]]],
) -> None:
    api, ids = made
    body = api.get("/executions").json()
    order = ids["plain"] + ids["steady"] + ids["scripted"] + ids["batch"]
    assert [i["id"] for i in body["items"]] == order
    assert (body["page"], body["pageSize"], body["total"]) == (1, 50, 7)
    assert listed(api, page=2, pageSize=3) == order[3:6]
    past = api.get("/executions", params={"page": 9, "pageSize": 3}).json()
    assert past["items"] == [] and past["total"] == 7


def test_by_agent(made: tuple[Api, dict[str, list[str]]]) -> None:
    api, ids = made
    agents = api.ids("/agents")
    assert listed(api, agentId=agents["steady"]) == ids["steady"]


def test_by_status_any_of_several(made: tuple[Api, dict[str, list[str]]]) -> None:
    api, ids = made
    assert listed(api, status="cancelled") == ids["steady"][:1]
    both = listed(api, status=["cancelled", "awaiting_confirmation"])
    assert both == ids["steady"][:1] + ids["scripted"]
    assert listed(api, status="queued") == []


def test_by_batch(made: tuple[Api, dict[str, list[str]]]) -> None:
    api, ids = made
    assert listed(api, batchId=BATCH) == ids["batch"]
    got = api.get(f"/executions/{ids['batch'][0]}").json()
    assert got["batchId"] == BATCH


def test_by_a_metadata_pair(made: tuple[Api, dict[str, list[str]]]) -> None:
    api, ids = made
    assert listed(api, metadataKey="team", metadataValue="ops") == ids["steady"] + ids["scripted"]
    assert listed(api, metadataKey="n", metadataValue="1") == ids["plain"][1:2]
    assert listed(api, metadataKey="team", metadataValue="sales") == []


@pytest.mark.parametrize(
    ("params", "parameter"),
    [
        ({"metadataKey": "team"}, "metadataValue"),
        ({"metadataValue": "ops"}, "metadataKey"),
        ({"status": "sleeping"}, "status"),
        ({"agentId": "nope"}, "agentId"),
        ({"pageSize": 101}, "pageSize"),
    ],
)
def test_bad_filters_are_400_naming_the_parameter(
    made: tuple[Api, dict[str, list[str]]], params: dict[str, Any], parameter: str
) -> None:
    err = assert_error(made[0].get("/executions", params=params), 400)
    assert err["errors"][0]["parameter"] == parameter


def test_another_organization_sees_none_of_them(made: tuple[Api, dict[str, list[str]]]) -> None:
    api, _ = made
    assert api.as_key(RIVAL_KEY).get("/executions").json()["total"] == 0
    assert_error(api.get("/executions", params={"organizationId": RIVAL_ORG}), 403)


AdvanceFn = Callable[[float], None]
