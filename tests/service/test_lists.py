"""Lists (docs/service/contract.md#lists): paging, stable order, total, searchName, sorting."""

from __future__ import annotations

import pytest
from fastapi import FastAPI

from tests.service.conftest import Api, assert_error


@pytest.mark.parametrize(
    "params", [{"page": 0}, {"pageSize": 0}, {"pageSize": 101}, {"page": "one"}, {"pageSize": -3}]
)
def test_bad_paging_is_400(api: Api, params: dict) -> None:  # type: ignore[type-arg]
    for path in (
        "/agent-profile-pools",
        "/profiles",
        "/agents",
        "/vault/templates",
        "/profile-groups",
    ):
        assert_error(api.get(path, params=params), 400)


def test_sort_fields_and_directions(api: Api) -> None:
    for name in ("bravo", "alpha", "charlie"):
        api.post("/agent-profile-pools", json={"name": name})
    api.patch(
        f"/agent-profile-pools/{api.ids('/agent-profile-pools')['alpha']}",
        json={"allowConcurrentUse": True},
    )

    def names(**params: str) -> list[str]:
        return [i["name"] for i in api.get("/agent-profile-pools", params=params).json()["items"]]

    assert names() == ["bravo", "alpha", "charlie"]
    assert names(sortDirection="desc") == ["charlie", "alpha", "bravo"]
    assert names(sortField="name") == ["alpha", "bravo", "charlie"]
    assert names(sortField="name", sortDirection="desc") == ["charlie", "bravo", "alpha"]
    assert names(sortField="updated_at") == ["bravo", "charlie", "alpha"]
    assert names(sortField="created_at", sortDirection="asc") == ["bravo", "alpha", "charlie"]


@pytest.mark.parametrize(
    "params", [{"sortField": "id"}, {"sortDirection": "up"}, {"sortField": "NAME"}]
)
def test_unknown_sort_values_are_400(api: Api, params: dict) -> None:  # type: ignore[type-arg]
    for path in ("/agent-profile-pools", "/profile-groups", "/profiles", "/agents"):
        assert_error(api.get(path, params=params), 400, next(iter(params)))


def test_agents_sort_by_updated_at_is_not_offered(api: Api) -> None:
    assert_error(api.get("/agents", params={"sortField": "updated_at"}), 400, "sortField")


def test_lists_show_only_the_callers_organization(api: Api) -> None:
    api.post("/agent-profile-pools", json={"name": "mine"})
    other = api.as_key("other-admin-key-0001")
    other.post("/agent-profile-pools", json={"name": "theirs"})
    assert set(api.ids("/agent-profile-pools")) == {"mine"}
    assert set(other.ids("/agent-profile-pools")) == {"theirs"}
    assert set(other.ids("/profiles")) == {"foreign"}
    assert set(other.ids("/agents")) == {"other-agent"}


def test_pages_stay_exact_while_writes_interleave(api: Api, app: FastAPI) -> None:
    """Lists are served from an order cache valid for one database generation; a
    random run of creates, renames and deletes must never show a stale page."""
    import random

    rng = random.Random(7)
    model: dict[str, str] = {}  # id -> name, in creation order
    for step in range(150):
        op = rng.random()
        if op < 0.5 or not model:
            body = api.post("/agent-profile-pools", json={"name": f"n{step:03d}"}).json()
            model[body["id"]] = body["name"]
        elif op < 0.7:
            victim = rng.choice(list(model))
            api.delete(f"/agent-profile-pools/{victim}")
            del model[victim]
        else:
            target = rng.choice(list(model))
            model[target] = f"r{step:03d}"
            api.patch(f"/agent-profile-pools/{target}", json={"name": model[target]})
        size = rng.choice([1, 7, 50])
        page = rng.randint(1, max(1, -(-len(model) // size)))
        body = api.get("/agent-profile-pools", params={"page": page, "pageSize": size}).json()
        expected = list(model.items())[(page - 1) * size : page * size]
        assert body["total"] == len(model)
        assert [(i["id"], i["name"]) for i in body["items"]] == expected
        by_name = api.get("/agent-profile-pools", params={"sortField": "name", "pageSize": 100})
        assert [i["name"] for i in by_name.json()["items"]] == sorted(model.values())[:100]


def test_a_read_is_served_from_the_cache_until_the_next_write(api: Api, app: FastAPI) -> None:
    db = app.state.db
    for i in range(3):
        api.post("/agent-profile-pools", json={"name": f"p{i}"})
    api.get("/agent-profile-pools")  # one page: its rows give the order, cached too
    generation = db._generation
    assert generation % 2 == 0
    assert [gen for gen, _ in db.order_cache._entries.values()] == [generation]
    api.get("/agent-profile-pools", params={"pageSize": 2})  # the same order, from the cache
    assert [gen for gen, _ in db.order_cache._entries.values()] == [generation]
    api.post("/agent-profile-pools", json={"name": "p3"})
    assert db._generation == generation + 2
    assert api.get("/agent-profile-pools", params={"pageSize": 2}).json()["total"] == 4
