"""The execution batch operations over HTTP (docs/service/contract.md#execution-batches,
#batch-object): the created object, every creation error by field and by item, the
list's filters and error statuses, the items view, and each allowed and refused status
change."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi import FastAPI

from tests.service.batches.support import (
    BATCH_READ_KEY,
    FOREIGN_KEY,
    all_items,
    at,
    batch_body,
    counts,
    create,
    get,
)
from tests.service.conftest import Api, assert_error

Advance = Callable[[float], None]
NOWHERE = "99999999-9999-4999-8999-999999999999"


@pytest.fixture(scope="module")
def foreign(api: Api) -> dict[str, str]:
    """Ids of the other organization: its agent and a pool of its own."""
    other = api.as_key(FOREIGN_KEY)
    pool = other.post("/agent-profile-pools", json={"name": "theirs"}).json()["id"]
    return {"agent": other.ids("/agents")["worker"], "pool": pool}


@pytest.fixture(scope="module")
def pool(api: Api) -> str:
    created = api.post("/agent-profile-pools", json={"name": "api-pool"})
    return str(created.json()["id"])


def batch_count(api: Api) -> int:
    return int(api.get("/execution-batches").json()["total"])


# -- create -------------------------------------------------------------------


def test_create_answers_the_batch_of_seed_2_3(api: Api, agents: dict[str, str]) -> None:
    body = batch_body(agents["worker"], "shape", items=[{"inputs": {"n": n}} for n in range(3)])
    r = api.post("/execution-batches", json=body)
    assert r.status_code == 201
    batch = r.json()
    assert set(batch) == {
        "id",
        "agentId",
        "name",
        "status",
        "config",
        "concurrencyGroupId",
        "startAt",
        "createdAt",
        "updatedAt",
        "totalCount",
        "pendingCount",
        "awaitingCapacityCount",
        "triggeredCount",
        "cancelledCount",
        "failedCount",
    }
    assert batch["agentId"] == agents["worker"]
    assert batch["status"] == "pending"
    assert batch["config"] == {"type": "timeBatching", "batchSize": 10, "batchInterval": 60}
    assert batch["concurrencyGroupId"] == batch["id"]
    assert batch["startAt"] == "2030-01-01T00:00:00.000000Z"
    assert batch["createdAt"].endswith("Z")
    assert (batch["totalCount"], counts(batch)) == (3, (3, 0, 0, 0, 0))
    assert get(api, batch["id"]) == batch


def test_ten_thousand_items_are_one_batch(api: Api, agents: dict[str, str]) -> None:
    items = [{"inputs": {"order": f"A-{n}"}} for n in range(10_000)]
    batch = create(api, batch_body(agents["worker"], "ten-thousand", items=items))
    assert (batch["totalCount"], batch["pendingCount"]) == (10_000, 10_000)
    last = api.get(f"/execution-batches/{batch['id']}/items", params={"page": 100, "pageSize": 100})
    assert [i["index"] for i in last.json()["items"]] == list(range(9_900, 10_000))
    assert last.json()["items"][-1]["request"] == {"inputs": {"order": "A-9999"}}


def _error_on(api: Api, body: dict[str, Any], parameter: str, *words: str) -> None:
    before = batch_count(api)
    found = assert_error(api.post("/execution-batches", json=body), 400, *words)
    assert parameter in [e["parameter"] for e in found["errors"]], found
    assert parameter in found["message"]
    assert batch_count(api) == before  # nothing written


@pytest.mark.parametrize(
    ("change", "parameter"),
    [
        ({"agentId": "not-a-uuid"}, "agentId"),
        ({"agentId": None}, "agentId"),
        ({"name": ""}, "name"),
        ({"name": "x" * 201}, "name"),
        ({"name": 7}, "name"),
        ({"startAt": "2030-01-01T00:00:00"}, "startAt"),
        ({"startAt": "soon"}, "startAt"),
        ({"startAt": 1_900_000_000}, "startAt"),
        (
            {"config": {"type": "countBatching", "batchSize": 10, "batchInterval": 60}},
            "config.type",
        ),
        (
            {"config": {"type": "timeBatching", "batchSize": 0, "batchInterval": 60}},
            "config.batchSize",
        ),
        (
            {"config": {"type": "timeBatching", "batchSize": 1001, "batchInterval": 60}},
            "config.batchSize",
        ),
        (
            {"config": {"type": "timeBatching", "batchSize": 10, "batchInterval": 0}},
            "config.batchInterval",
        ),
        (
            {"config": {"type": "timeBatching", "batchSize": 10, "batchInterval": 86_401}},
            "config.batchInterval",
        ),
        ({"config": {"type": "timeBatching", "batchSize": 10}}, "config.batchInterval"),
        ({"concurrencyGroupId": "group-1"}, "concurrencyGroupId"),
        ({"items": []}, "items"),
        ({"items": [{}] * 10_001}, "items"),
        ({"items": {"0": {}}}, "items"),
        ({"priority": "high"}, "priority"),
    ],
)
def test_each_field_rule_is_a_400_naming_the_field(
    api: Api, agents: dict[str, str], change: dict[str, Any], parameter: str
) -> None:
    _error_on(api, batch_body(agents["worker"], "bad-field", **change), parameter)


@pytest.mark.parametrize("missing", ["agentId", "name", "startAt", "config", "items"])
def test_each_required_field(api: Api, agents: dict[str, str], missing: str) -> None:
    body = batch_body(agents["worker"], "missing")
    del body[missing]
    _error_on(api, body, missing)


def test_an_agent_that_is_not_the_organizations_is_a_400(api: Api, foreign: dict[str, str]) -> None:
    _error_on(api, batch_body(foreign["agent"], "not-ours"), "agentId", "no agent")
    _error_on(api, batch_body(NOWHERE, "nowhere"), "agentId", "no agent")


@pytest.mark.parametrize(
    ("item", "parameter", "words"),
    [
        ({"version": 4}, "items[2].version", ("no version 4",)),
        ({"version": "2"}, "items[2].version", ()),
        (
            {"agentProfilePoolId": NOWHERE},
            "items[2].agentProfilePoolId",
            ("no agent profile pool",),
        ),
        ({"agentProfileId": NOWHERE}, "items[2].agentProfileId", ("no agent profile",)),
        ({"metadata": {"team": 1}}, "items[2].metadata.team", ()),
        ({"tempFiles": [{"id": NOWHERE, "name": "a.csv"}]}, "items[2].tempFiles.0.id", ("staged",)),
        (
            {"executionOptions": {"softTimeoutMins": 0}},
            "items[2].executionOptions.softTimeoutMins",
            (),
        ),
        ({"onCapacityLimit": "queue"}, "items[2].onCapacityLimit", ("waits for capacity",)),
        ({"agent": "worker"}, "items[2].agent", ("unknown field",)),
        ("not an object", "items[2]", ()),
    ],
)
def test_each_item_is_checked_by_the_execute_rules_and_named(
    api: Api, agents: dict[str, str], item: Any, parameter: str, words: tuple[str, ...]
) -> None:
    body = batch_body(agents["versioned"], "bad-item", items=[{}, {"version": 1}, item])
    _error_on(api, body, parameter, *words)


def test_an_item_naming_another_organizations_pool_is_a_400(
    api: Api, agents: dict[str, str], foreign: dict[str, str], pool: str
) -> None:
    items = [{"agentProfilePoolId": pool}, {"agentProfilePoolId": foreign["pool"]}]
    body = batch_body(agents["worker"], "their-pool", items=items)
    _error_on(api, body, "items[1].agentProfilePoolId")


def test_profile_and_pool_together_is_a_400(api: Api, agents: dict[str, str], pool: str) -> None:
    profile = api.ids("/profiles")["batchers-p1"]
    item = {"agentProfileId": profile, "agentProfilePoolId": pool}
    _error_on(
        api, batch_body(agents["worker"], "both", items=[item]), "items[0].agentProfilePoolId"
    )


def test_every_bad_item_is_named_at_once(api: Api, agents: dict[str, str]) -> None:
    items = [{"version": "x"} if n % 1000 == 7 else {} for n in range(5_000)]
    found = assert_error(
        api.post("/execution-batches", json=batch_body(agents["worker"], "many-bad", items=items)),
        400,
    )
    assert [e["parameter"] for e in found["errors"]] == [
        f"items[{n}].version" for n in range(7, 5000, 1000)
    ]


def test_a_name_is_unique_per_agent_among_batches_not_cancelled(
    api: Api, agents: dict[str, str]
) -> None:
    first = create(api, batch_body(agents["worker"], "nightly"))
    assert_error(
        api.post("/execution-batches", json=batch_body(agents["worker"], "nightly")), 409, "nightly"
    )
    # Another agent may use the name; so may this agent once the first is cancelled.
    create(api, batch_body(agents["instant"], "nightly"))
    api.post(f"/execution-batches/{first['id']}/cancel")
    again = create(api, batch_body(agents["worker"], "nightly"))
    assert again["id"] != first["id"]
    assert_error(api.post("/execution-batches", json=batch_body(agents["worker"], "nightly")), 409)


def test_a_read_key_cannot_create_and_no_key_is_401(api: Api, agents: dict[str, str]) -> None:
    body = batch_body(agents["worker"], "by-reader")
    assert_error(api.as_key(BATCH_READ_KEY).post("/execution-batches", json=body), 403)
    assert_error(api.as_key(None).post("/execution-batches", json=body), 401)
    assert_error(api.as_key("wrong-key").post("/execution-batches", json=body), 401)


# -- reads --------------------------------------------------------------------


def test_get_of_an_unknown_or_foreign_batch_is_404_and_a_bad_id_400(
    api: Api, agents: dict[str, str]
) -> None:
    batch = create(api, batch_body(agents["worker"], "mine"))
    assert_error(api.get(f"/execution-batches/{NOWHERE}"), 404)
    assert_error(api.as_key(FOREIGN_KEY).get(f"/execution-batches/{batch['id']}"), 404)
    assert_error(api.as_key(FOREIGN_KEY).get(f"/execution-batches/{batch['id']}/items"), 404)
    assert_error(api.as_key(FOREIGN_KEY).post(f"/execution-batches/{batch['id']}/pause"), 404)
    assert_error(api.get("/execution-batches/not-a-uuid"), 400)
    assert_error(api.get("/execution-batches/not-a-uuid/items"), 400)
    assert api.as_key(BATCH_READ_KEY).get(f"/execution-batches/{batch['id']}").status_code == 200


def test_items_are_paged_in_index_order_with_the_request_as_created(
    api: Api, agents: dict[str, str], pool: str
) -> None:
    sent = [
        {"inputs": {"n": n}, "metadata": {"k": "v"}, "agentProfilePoolId": pool, "version": 2}
        if n % 2
        else {"inputs": {"n": n}, "dynamicData": {"old": True}}
        for n in range(7)
    ]
    batch = create(api, batch_body(agents["versioned"], "items-view", items=sent))
    page = api.get(
        f"/execution-batches/{batch['id']}/items", params={"pageSize": 3, "page": 2}
    ).json()
    assert (page["page"], page["pageSize"], page["total"]) == (2, 3, 7)
    assert [i["index"] for i in page["items"]] == [3, 4, 5]
    items = all_items(api, batch["id"])
    assert [i["request"] for i in items] == sent
    assert {i["status"] for i in items} == {"pending"}
    assert set(items[0]) == {"id", "index", "status", "request"}  # nothing triggered yet
    assert len({i["id"] for i in items}) == 7
    past = api.get(f"/execution-batches/{batch['id']}/items", params={"page": 9}).json()
    assert (past["items"], past["total"]) == ([], 7)
    assert_error(api.get(f"/execution-batches/{batch['id']}/items", params={"pageSize": 101}), 400)


@pytest.fixture(scope="module")
def listed(api: Api, agents: dict[str, str], advance: Advance, app: FastAPI) -> dict[str, str]:
    """Batches of every status but completed… and one completed, for the list tests."""
    worker, instant = agents["worker"], agents["instant"]
    made = {
        "L-pending": create(api, batch_body(worker, "L-pending")),
        "L-Paused": create(api, batch_body(worker, "L-Paused")),
        "L-cancelled": create(api, batch_body(instant, "L-cancelled")),
        "L-running": create(
            api, batch_body(worker, "L-running", startAt=at(app, 0), items=[{}] * 11)
        ),
        "L-completed": create(api, batch_body(instant, "L-completed", startAt=at(app, 0))),
    }
    api.post(f"/execution-batches/{made['L-Paused']['id']}/pause")
    api.post(f"/execution-batches/{made['L-cancelled']['id']}/cancel")
    return {name: b["id"] for name, b in made.items()}


def _names(api: Api, **params: Any) -> set[str]:
    r = api.get("/execution-batches", params={"pageSize": 100, **params})
    assert r.status_code == 200, r.text
    return {b["name"] for b in r.json()["items"] if b["name"].startswith("L-")}


def test_list_filters_by_status_repeatable(api: Api, listed: dict[str, str]) -> None:
    for status in ("pending", "running", "paused", "completed", "cancelled"):
        found = _names(api, status=status)
        assert found == {n for n in listed if n.lower() == f"l-{status}"}, status
    assert _names(api, status=["paused", "completed"]) == {"L-Paused", "L-completed"}
    assert _names(api) == set(listed)


def test_list_filters_by_agent_and_name(
    api: Api, agents: dict[str, str], listed: dict[str, str]
) -> None:
    assert _names(api, agentId=agents["instant"]) == {"L-cancelled", "L-completed"}
    assert _names(api, searchName="paus") == {"L-Paused"}
    assert _names(api, searchName="l-PAUSED") == {"L-Paused"}
    assert _names(api, agentId=agents["instant"], status="completed", searchName="L-") == {
        "L-completed"
    }


def test_list_pages_and_creation_order(api: Api, listed: dict[str, str]) -> None:
    first = api.get("/execution-batches", params={"pageSize": 2}).json()
    total = first["total"]
    seen: list[str] = []
    for page in range(1, total // 2 + 2):
        seen += [
            b["id"]
            for b in api.get("/execution-batches", params={"pageSize": 2, "page": page}).json()[
                "items"
            ]
        ]
    assert len(seen) == len(set(seen)) == total
    created = [get(api, i)["createdAt"] for i in seen]
    assert created == sorted(created)


@pytest.mark.parametrize(
    ("params", "status"),
    [
        ({"status": "finished"}, 400),
        ({"status": ["running", "Running"]}, 400),
        ({"agentId": "checkout"}, 400),
        ({"agentId": NOWHERE}, 404),
        ({"page": 0}, 400),
        ({"pageSize": 101}, 400),
        ({"organizationId": "22222222-2222-4222-8222-222222222222"}, 403),
    ],
)
def test_list_error_statuses_of_seed_4_2(api: Api, params: dict[str, Any], status: int) -> None:
    assert_error(api.get("/execution-batches", params=params), status)


def test_list_of_another_organizations_agent_is_404(api: Api, foreign: dict[str, str]) -> None:
    assert_error(api.get("/execution-batches", params={"agentId": foreign["agent"]}), 404)


def test_list_without_a_valid_key_is_401(api: Api) -> None:
    assert_error(api.as_key(None).get("/execution-batches"), 401)
    assert_error(api.as_key("nope").get("/execution-batches"), 401)
    assert api.as_key(BATCH_READ_KEY).get("/execution-batches").status_code == 200


def test_list_shows_only_the_callers_batches(api: Api, listed: dict[str, str]) -> None:
    theirs = api.as_key(FOREIGN_KEY).get("/execution-batches", params={"pageSize": 100}).json()
    assert not {b["id"] for b in theirs["items"]} & set(listed.values())


# -- status changes -----------------------------------------------------------


def _post(api: Api, batch_id: str, action: str) -> Any:
    return api.post(f"/execution-batches/{batch_id}/{action}")


def test_each_allowed_change(
    api: Api, agents: dict[str, str], advance: Advance, app: FastAPI
) -> None:
    # pending -> paused -> pending -> cancelled
    a = create(api, batch_body(agents["worker"], "moves-a"))["id"]
    assert _post(api, a, "pause").json()["status"] == "paused"
    assert _post(api, a, "resume").json()["status"] == "pending"
    assert _post(api, a, "cancel").json()["status"] == "cancelled"
    # pending -> running -> paused -> running -> paused -> cancelled
    b = create(api, batch_body(agents["worker"], "moves-b", startAt=at(app, 1), items=[{}] * 11))[
        "id"
    ]
    advance(1)
    assert get(api, b)["status"] == "running"
    assert _post(api, b, "pause").json()["status"] == "paused"
    assert _post(api, b, "resume").json()["status"] == "running"
    assert _post(api, b, "pause").json()["status"] == "paused"
    assert _post(api, b, "cancel").json()["status"] == "cancelled"
    # running -> cancelled; running -> completed
    c = create(api, batch_body(agents["worker"], "moves-c", startAt=at(app, 0), items=[{}] * 11))[
        "id"
    ]
    assert _post(api, c, "cancel").json()["status"] == "cancelled"
    d = create(api, batch_body(agents["worker"], "moves-d", startAt=at(app, 0), items=[{}] * 11))[
        "id"
    ]
    advance(60)
    assert get(api, d)["status"] == "completed"


def test_each_refused_change_is_409(api: Api, agents: dict[str, str], app: FastAPI) -> None:
    pending = create(api, batch_body(agents["worker"], "refused-pending"))["id"]
    running = create(
        api, batch_body(agents["worker"], "refused-running", startAt=at(app, 0), items=[{}] * 11)
    )["id"]
    paused = create(api, batch_body(agents["worker"], "refused-paused"))["id"]
    _post(api, paused, "pause")
    completed = create(api, batch_body(agents["worker"], "refused-completed", startAt=at(app, 0)))[
        "id"
    ]
    cancelled = create(api, batch_body(agents["worker"], "refused-cancelled"))["id"]
    _post(api, cancelled, "cancel")
    refused = [
        (pending, "resume", "pending"),
        (running, "resume", "running"),
        (paused, "pause", "paused"),
        *[(completed, action, "completed") for action in ("pause", "resume", "cancel")],
        *[(cancelled, action, "cancelled") for action in ("pause", "resume", "cancel")],
    ]
    for batch_id, action, status in refused:
        before = get(api, batch_id)
        assert_error(_post(api, batch_id, action), 409, f"cannot {action} a batch that is {status}")
        assert get(api, batch_id) == before  # nothing changed


def test_status_changes_need_a_write_key(api: Api, agents: dict[str, str]) -> None:
    batch = create(api, batch_body(agents["worker"], "reader-moves"))["id"]
    for action in ("pause", "resume", "cancel"):
        assert_error(api.as_key(BATCH_READ_KEY).post(f"/execution-batches/{batch}/{action}"), 403)
    assert_error(api.post(f"/execution-batches/{NOWHERE}/pause"), 404)
    assert_error(api.post("/execution-batches/nope/cancel"), 400)
