"""Lists over many rows (docs/service/contract.md#lists): paging, the default page
size and searchName over 250 pools. The pools are made once for the module, by the
API (`made`); each test gets a copy of that database."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi import FastAPI

from tests.service.conftest import TEST_SEED, Api, client_of
from tests.service.templates import copy_database, snapshot

POOLS = [f"pool-{i:03d}" for i in range(250)]


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path: Path = snapshot(tmp_path_factory.mktemp("lists"), TEST_SEED, _make_pools)[0]
    return path


def _make_pools(app: FastAPI) -> None:
    with client_of(app) as client:
        for name in POOLS:
            assert Api(client).post("/agent-profile-pools", json={"name": name}).status_code == 201


@pytest.fixture
def db_path(tmp_path: Path, made: Path) -> Path:
    """This test's copy of the pools' database (the conftest's `app` opens it)."""
    return copy_database(made, tmp_path / "service.db")


def test_paging_returns_every_row_once_in_creation_order(api: Api) -> None:
    seen: list[str] = []
    for page in range(1, 5):
        body = api.get("/agent-profile-pools", params={"page": page, "pageSize": 70}).json()
        assert body["total"] == 250 and body["page"] == page and body["pageSize"] == 70
        seen += [i["name"] for i in body["items"]]
    assert seen == POOLS  # as made
    past = api.get("/agent-profile-pools", params={"page": 9, "pageSize": 70}).json()
    assert past["items"] == [] and past["total"] == 250


def test_default_page_size_is_50(api: Api) -> None:
    body = api.get("/agent-profile-pools").json()
    assert body["pageSize"] == 50 and len(body["items"]) == 50 and body["page"] == 1


def test_search_name_is_case_insensitive_substring(api: Api) -> None:
    api.post("/agent-profile-pools", json={"name": "Checkout_EU%"})
    body = api.get("/agent-profile-pools", params={"searchName": "OUT_e"}).json()
    assert [i["name"] for i in body["items"]] == ["Checkout_EU%"] and body["total"] == 1
    # no LIKE wildcards: % and _ are plain characters
    assert api.get("/agent-profile-pools", params={"searchName": "%"}).json()["total"] == 1
    assert api.get("/agent-profile-pools", params={"searchName": "pool-00"}).json()["total"] == 10
