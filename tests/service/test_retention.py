"""Retention (docs/guide/security.md#retention): finished history older than the service's
`retain` is forgotten by a runner job on the clock, a small batch a transaction, and
on demand (`POST /agentform/v1/prune`, `agentform service prune`); a pending
delivery and an unfinished execution never are. On the manual clock.

Before: deliveries, attempts, routing decisions, events and executions were never
deleted (only finished jobs after a day), so a service grew without bound.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from fastapi import FastAPI
from fastapi.testclient import TestClient

from agentform.cli.main import cli
from agentform.service import create_app
from agentform.service.runtime import ManualClock
from agentform.service.settings import ServiceSettings
from agentform.service.store import retention
from agentform.service.upkeep.retention import RETENTION_JOB
from tests.loopback import serving
from tests.service.conftest import Api, assert_error, running
from tests.service.execution_support import (
    EXEC_KEY,
    EXEC_ORG,
    EXEC_READ_KEY,
    EXEC_SEED,
    RIVAL_KEY,
    execute,
)
from tests.webhooks.receiver import running_receiver

DAY = 86400.0
TABLES = ("webhook_deliveries", "webhook_attempts", "routing_decisions", "events", "executions")


def _app(path: Path, retain: timedelta | None) -> FastAPI:
    settings = ServiceSettings(retain=retain)
    return create_app(path, seed=EXEC_SEED, clock=ManualClock(), settings=settings)


def counts(app: FastAPI, organization: str | None = None) -> dict[str, int]:
    with app.state.db.read() as conn:
        if organization is None:
            return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
        return {
            t: conn.execute(
                f"SELECT count(*) FROM {t}"
                + ("" if t == "webhook_attempts" else " WHERE organization_id = ?"),
                () if t == "webhook_attempts" else (organization,),
            ).fetchone()[0]
            for t in TABLES
        }


def _history(api: Api, app: FastAPI, advance: Any, url: str) -> dict[str, str]:
    """Three executions finished and delivered, one paused (unfinished), and one
    delivery left pending; their ids."""
    agent = api.ids("/agents")["steady"]
    made = api.post("/webhook-integrations", json={"name": "keep", "url": url}).json()
    api.request("PUT", f"/agents/{agent}/webhooks/{made['id']}", json={"eventRules": ["*"]})
    done = [execute(api, agent) for _ in range(3)]
    advance(10)
    paused = execute(api, agent)
    advance(0)
    assert api.post(f"/executions/{paused}/pause").status_code == 200
    advance(0)
    with app.state.db.write() as conn:  # one delivery still waiting (its lane held)
        row = conn.execute(
            "SELECT id, execution_id FROM webhook_deliveries WHERE execution_id = ? LIMIT 1",
            (done[0],),
        ).fetchone()
        conn.execute("UPDATE webhook_deliveries SET status = 'pending' WHERE id = ?", (row[0],))
    return {"done": done[1], "pending_of": done[0], "paused": paused, "pending": row[0]}


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retention, "BATCH", 5)


def test_history_past_the_retention_is_forgotten_on_the_clock_in_small_batches(
    tmp_path: Path, small_batches: None
) -> None:
    app = _app(tmp_path / "s.db", timedelta(days=1))
    with running_receiver() as rx, running(app, EXEC_KEY) as (api, advance):
        ids = _history(api, app, advance, rx.url)
        before = counts(app)
        advance(DAY / 2)
        assert counts(app) == before  # younger than a day: all kept
        advance(DAY)
        after = counts(app)
        assert api.get(f"/executions/{ids['done']}").status_code == 404
        assert api.get(f"/executions/{ids['paused']}").json()["status"] == "paused"
        assert api.get(f"/executions/{ids['pending_of']}").status_code == 200
    with app.state.db.read() as conn:
        kept = [r[0] for r in conn.execute("SELECT id FROM webhook_deliveries")]
        paused_events = conn.execute(
            "SELECT count(*) FROM events WHERE execution_id = ?", (ids["paused"],)
        ).fetchone()[0]
        runs = conn.execute(
            "SELECT count(*) FROM jobs WHERE kind = ? AND status = 'done'", (RETENTION_JOB,)
        ).fetchone()[0]
    app.state.db.close()
    assert kept == [ids["pending"]]
    assert after["webhook_attempts"] == 1 < before["webhook_attempts"]  # the pending one's
    assert after["executions"] == 2  # the paused one, and the one a pending delivery is of
    assert paused_events > 0
    assert before["routing_decisions"] > after["routing_decisions"] >= 1
    assert runs > before["webhook_deliveries"] // 5  # many short transactions, not one


def test_without_retention_nothing_is_forgotten(tmp_path: Path) -> None:
    app = _app(tmp_path / "s.db", None)
    with running_receiver() as rx, running(app, EXEC_KEY) as (api, advance):
        _history(api, app, advance, rx.url)
        before = counts(app)
        advance(40 * DAY)
        assert counts(app) == before
    app.state.db.close()


@pytest.fixture
def pruned(tmp_path: Path) -> Iterator[tuple[FastAPI, Api, Any]]:
    app = _app(tmp_path / "s.db", None)
    with running_receiver() as rx, running(app, EXEC_KEY) as (api, advance):
        _history(api, app, advance, rx.url)
        rival = api.as_key(RIVAL_KEY)
        execute(rival, rival.ids("/agents")["rival-agent"])
        advance(2 * DAY)
        yield app, api, advance
    app.state.db.close()


def test_prune_on_demand_forgets_the_callers_history_only(
    pruned: tuple[FastAPI, Api, Any],
) -> None:
    app, api, _ = pruned
    rival_before = counts(app)["executions"] - counts(app, EXEC_ORG)["executions"]
    answer = api.client.post(
        "/agentform/v1/prune", json={"olderThan": "1d"}, headers={"X-Api-Key": EXEC_KEY}
    )
    assert answer.status_code == 200, answer.text
    deleted = answer.json()["deleted"]
    assert deleted["executions"] == 2 and deleted["deliveries"] > 0
    assert counts(app, EXEC_ORG)["executions"] == 2
    assert counts(app)["executions"] - 2 == rival_before == 1


def test_prune_needs_an_admin_key_and_a_duration(pruned: tuple[FastAPI, Api, Any]) -> None:
    _, api, _ = pruned
    url = "/agentform/v1/prune"
    read = api.client.post(url, json={"olderThan": "1d"}, headers={"X-Api-Key": EXEC_READ_KEY})
    assert_error(read, 403)
    bad = api.client.post(url, json={"olderThan": "30"}, headers={"X-Api-Key": EXEC_KEY})
    assert_error(bad, 400, "olderThan", "say the unit")


def test_service_prune_forgets_through_the_running_service(tmp_path: Path) -> None:
    app = _app(tmp_path / "s.db", None)
    with running_receiver() as rx, serving(app) as origin:
        api = Api(TestClient(app), EXEC_KEY)  # to look; the command goes over HTTP
        agent = api.ids("/agents")["steady"]
        made = api.post("/webhook-integrations", json={"name": "k", "url": rx.url}).json()
        api.request("PUT", f"/agents/{agent}/webhooks/{made['id']}", json={"eventRules": ["*"]})
        execute(api, agent)
        httpx.post(
            f"{origin}/agentform/v1/clock/advance",
            json={"duration": "2d"},
            headers={"X-Api-Key": EXEC_KEY},
        ).raise_for_status()
        env = {"AGENTFORM_API_KEY": EXEC_KEY, "AGENTFORM_ENDPOINT": ""}
        args = ["service", "prune", "--older-than", "1d", "--endpoint", f"{origin}/agents/v2"]
        result = CliRunner().invoke(cli, args, env=env, catch_exceptions=False)
        typo = CliRunner().invoke(cli, [*args[:3], "1 day", *args[4:]], env=env)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("forgot what finished before ")
    assert "1 executions" in result.output and "0 deliveries" not in result.output
    assert counts(app, EXEC_ORG)["executions"] == 0
    assert typo.exit_code != 0 and "not a duration" in typo.output
    app.state.db.close()
