"""Seed files, persistence across restarts, and uniqueness under concurrency."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from agentform.service import SeedError, create_app, read_seed
from tests.service.conftest import ADMIN_KEY, BASE, TEST_SEED, Api


def test_loading_the_seed_twice_creates_nothing_twice(tmp_path: Path) -> None:
    db_path = tmp_path / "fresh.db"  # not the db_path fixture: that one is seeded already
    create_app(db_path, seed=TEST_SEED).state.db.close()
    app = create_app(db_path, seed=TEST_SEED)
    api = Api(TestClient(app))
    assert api.get("/agents").json()["total"] == 2
    assert api.get("/profiles").json()["total"] == 5
    with app.state.db.read() as conn:
        assert conn.execute("SELECT count(*) FROM organizations").fetchone()[0] == 2
        assert conn.execute("SELECT count(*) FROM api_keys").fetchone()[0] == 3
        assert conn.execute("SELECT count(*) FROM vault_templates").fetchone()[0] == 3


def test_data_survives_a_restart(db_path: Path) -> None:
    app = create_app(db_path, seed=TEST_SEED)
    api = Api(TestClient(app))
    pool = api.post("/agent-profile-pools", json={"name": "kept"}).json()
    api.post(
        f"/agent-profile-pools/{pool['id']}/members",
        json={"profileIds": [api.ids("/profiles")["p1"]]},
    )
    app.state.db.close()
    again = Api(TestClient(create_app(db_path, seed=TEST_SEED)))
    assert again.get(f"/agent-profile-pools/{pool['id']}").json() == pool
    members = again.get(f"/agent-profile-pools/{pool['id']}/members").json()["items"]
    assert [m["name"] for m in members] == ["p1"]


def test_database_is_in_wal_mode(app: FastAPI) -> None:
    with app.state.db.read() as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_concurrent_creates_of_one_name_give_one_201_and_one_409(app: FastAPI) -> None:
    async def race() -> list[int]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://svc") as client:
            calls = [
                client.post(
                    f"{BASE}/agent-profile-pools",
                    json={"name": "same"},
                    headers={"X-Api-Key": ADMIN_KEY},
                )
                for _ in range(8)
            ]
            return sorted(r.status_code for r in await asyncio.gather(*calls))

    assert asyncio.run(race()) == [201] + [409] * 7
    with app.state.db.read() as conn:
        rows = conn.execute("SELECT count(*) FROM profile_sets WHERE name = 'same'").fetchone()
    assert rows[0] == 1


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("organizations: [", "not valid YAML"),
        ("{}", "organizations"),
        ("organizations: [{name: a, colour: red}]", "colour"),
        ("organizations: [{name: a, apiKeys: [{name: k, key: longenough, role: owner}]}]", "role"),
        (
            "organizations: [{name: a, agents: [{name: x, versions: [1], publishedVersion: 3}]}]",
            "publishedVersion",
        ),
        ("organizations: [{name: a, profiles: [{name: x}, {name: x}]}]", "duplicate"),
        (
            "organizations: [{name: a, apiKeys: [{name: k, key: samekey1, role: read}]},"
            " {name: b, apiKeys: [{name: k, key: samekey1, role: read}]}]",
            "same key",
        ),
    ],
)
def test_invalid_seed_files_name_the_problem(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "seed.yaml"
    path.write_text(text)
    with pytest.raises(SeedError, match=words) as info:
        read_seed(path)
    assert str(path) in str(info.value)


def test_missing_seed_file(tmp_path: Path) -> None:
    with pytest.raises(SeedError, match="cannot read"):
        read_seed(tmp_path / "absent.yaml")


def test_seed_file_from_the_issue_loads(tmp_path: Path) -> None:
    path = tmp_path / "seed.yaml"
    path.write_text(
        "organizations:\n"
        "  - name: demo\n"
        "    id: 0b7f3c1e-0000-4000-8000-000000000001\n"
        "    apiKeys:\n"
        "      - {name: admin, key: demo-admin-key, role: admin}\n"
        "      - {name: reader, key: demo-read-key, role: read}\n"
        "    agents:\n"
        "      - {name: checkout-agent, versions: [1, 2], publishedVersion: 2}\n"
        "    profiles:\n"
        "      - {name: bot-1, description: first bot}\n"
    )
    app = create_app(tmp_path / "db.sqlite", seed=read_seed(path))
    ctx = Api(TestClient(app), key="demo-admin-key").get("/context").json()
    assert ctx["organizationId"] == "0b7f3c1e-0000-4000-8000-000000000001"


def test_a_seed_key_typo_suggests_the_known_key(tmp_path: Path) -> None:
    path = tmp_path / "seed.yaml"
    path.write_text("organizations: [{name: a, agnts: [{name: x}]}]\n")
    with pytest.raises(SeedError) as info:
        read_seed(path)
    assert str(info.value) == (
        f"{path}:1:27: error: organizations.0.agnts: unknown field (did you mean 'agents'?)"
    )
