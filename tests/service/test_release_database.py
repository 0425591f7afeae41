"""A `service.db` written by release 0.1 opens with this code, its data kept."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from agentform.service import DEMO_ADMIN_KEY, create_app
from tests.service.conftest import Api
from tests.service.fixtures.make_release_db import EXPECTED, TEMPLATES

FIXTURE = Path(__file__).parent / "fixtures" / "service-release-0.1.db"


@pytest.fixture(scope="module")
def upgraded(tmp_path_factory: pytest.TempPathFactory) -> FastAPI:
    path = tmp_path_factory.mktemp("release") / "service.db"
    shutil.copyfile(FIXTURE, path)
    return create_app(path)


@pytest.fixture(scope="module")
def api(upgraded: FastAPI) -> Api:
    return Api(TestClient(upgraded), DEMO_ADMIN_KEY)


@pytest.mark.parametrize(
    ("path", "kind"), [("/agent-profile-pools", "pools"), ("/profile-groups", "groups")]
)
def test_pools_and_groups_keep_their_settings_and_members(api: Api, path: str, kind: str) -> None:
    expected = EXPECTED[kind]
    assert isinstance(expected, dict)
    items = api.get(path, params={"pageSize": 100}).json()["items"]
    assert [i["name"] for i in items] == list(expected)
    for item in items:
        strategy, concurrent, members = expected[item["name"]]
        assert (item["selectionStrategy"], item["allowConcurrentUse"]) == (strategy, concurrent)
        listed = api.get(f"{path}/{item['id']}/members").json()["items"]
        assert sorted(m["name"] for m in listed) == sorted(members)


def test_templates_are_kept_field_by_field(api: Api) -> None:
    items = api.get("/vault/templates").json()["items"]
    manual = [t for t in items if t["origin"] == "manual"]
    assert [t["name"] for t in manual] == EXPECTED["templates"]
    shop = manual[0]
    assert shop["description"] == TEMPLATES[0]["description"]
    assert [f["key"] for f in shop["fields"]] == ["LOGIN_URL", "USERNAME", "PASSWORD"]
    assert shop["fields"][2]["hint"] == "the shop's"
    assert [s["key"] for s in shop["steps"]] == ["open", "sign-in"]
    assert len([t for t in items if t["origin"] == "generated"]) == 3


def test_the_seeded_key_and_the_data_made_through_the_api_still_work(api: Api) -> None:
    profiles = api.ids("/profiles")
    assert "extra-profile" in profiles and "bot-6" in profiles
    made = api.post("/agent-profile-pools", json={"name": "after-upgrade"})
    assert made.status_code == 201
    taken = api.post("/agent-profile-pools", json={"name": "checkout-pool"})
    assert taken.status_code == 409
