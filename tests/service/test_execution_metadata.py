"""An execution's metadata kept a row per key (migration 010): written with the
execution, found by the `key=value` filter of the API and the console, and filled
for executions made before the table existed."""

from __future__ import annotations

from fastapi import FastAPI

from agentform.service.store.migrations.m010_console_reads import BACKFILL
from tests.service.conftest import Api


def agent_of(api: Api) -> str:
    return api.ids("/agents")["support-agent"]


def test_the_filter_finds_by_the_rows_written_with_the_execution(api: Api) -> None:
    agent = agent_of(api)
    made = [
        api.post(f"/agents/{agent}/execute", json={"metadata": meta}).json()["executionId"]
        for meta in ({"team": "pay\u00efments", "q": 'a"b\\c'}, {"team": "ops"}, {})
    ]
    found = api.get(
        "/executions", params={"metadataKey": "team", "metadataValue": "pay\u00efments"}
    )
    assert [e["id"] for e in found.json()["items"]] == [made[0]]
    quoted = api.get("/executions", params={"metadataKey": "q", "metadataValue": 'a"b\\c'})
    assert [e["id"] for e in quoted.json()["items"]] == [made[0]]
    none = api.get("/executions", params={"metadataKey": "team", "metadataValue": "nobody"})
    assert none.json()["items"] == []


def test_executions_from_before_the_table_are_found_once_it_is_filled(
    app: FastAPI, api: Api
) -> None:
    agent = agent_of(api)
    made = api.post(f"/agents/{agent}/execute", json={"metadata": {"team": "old"}})
    execution = made.json()["executionId"]
    with app.state.db.write() as conn:  # as a database of an earlier release holds it
        conn.execute("DELETE FROM execution_metadata")
    params = {"metadataKey": "team", "metadataValue": "old"}
    assert api.get("/executions", params=params).json()["items"] == []
    with app.state.db.write() as conn:
        conn.execute(BACKFILL)
        conn.execute(BACKFILL)  # twice: nothing doubled
    assert [e["id"] for e in api.get("/executions", params=params).json()["items"]] == [execution]
