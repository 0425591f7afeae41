"""Routing explanations (/agentform/v1/executions/{id}/routing): for each event of an
execution and each attachment of its agent, whether a notification was sent, the
setting that decided it, in words, and what became of the delivery. One app for the
module, on a manual clock; and the clock operations of a service on the wall clock."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from agentform.service import create_app
from agentform.service.routes.agentform_clock import NOT_MANUAL
from agentform.service.store import routing
from tests.service.conftest import Api, assert_error
from tests.service.execution_support import (
    EXEC_KEY,
    EXEC_ORG,
    EXEC_READ_KEY,
    EXEC_SEED,
    RIVAL_KEY,
    execute,
    module_app,
    service,
    status_of,
)
from tests.webhooks.receiver import Receiver, running_receiver

Advance = Callable[[float], None]


app = module_app("routing")


@pytest.fixture(scope="module")
def svc(app: FastAPI) -> Iterator[tuple[Api, Advance]]:
    with service(app, EXEC_KEY) as running:
        yield running


@pytest.fixture(scope="module")
def rx() -> Iterator[Receiver]:
    with running_receiver() as receiver:
        yield receiver


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/nobody"


def attach(api: Api, agent: str, name: str, url: str, **settings: Any) -> str:
    made = api.post("/webhook-integrations", json={"name": name, "url": url})
    integration = str(made.json()["id"])
    put = api.request("PUT", f"/agents/{agent}/webhooks/{integration}", json=settings)
    assert put.status_code == 200, put.text
    return integration


def routing_of(api: Api, execution: str, key: str = EXEC_KEY) -> httpx.Response:
    path = f"/agentform/v1/executions/{execution}/routing"
    response: httpx.Response = api.client.get(path, headers={"X-Api-Key": key})
    return response


def run_scripted(api: Api, advance: Advance, agent: str, **body: Any) -> str:
    """The `scripted` agent to its end: 2 s, a confirmation, 1 s more."""
    execution = execute(api, agent, **body)
    advance(0)
    advance(2)
    assert status_of(api, execution) == "awaiting_confirmation"
    api.post(f"/executions/{execution}/user-messages", json={"message": "yes"})
    advance(1)
    return execution


@pytest.fixture(scope="module")
def explained(svc: tuple[Api, Advance], rx: Receiver) -> dict[str, Any]:
    """A scripted execution (metadata team=ops) weighed by five attachments."""
    api, advance = svc
    agent = api.ids("/agents")["scripted"]
    attach(api, agent, "only-failed", rx.url, eventRules=["EXECUTION_FAILED"])
    attach(api, agent, "payments", rx.url, eventRules=["*"], metadataFilter={"team": "payments"})
    failed_filter = {
        "event": "EXECUTION_COMPLETED",
        "path": "outcome",
        "op": "ne",
        "value": "success",
    }
    attach(
        api,
        agent,
        "unhappy",
        rx.url,
        eventRules=["EXECUTION_COMPLETED"],
        fieldFilters=[failed_filter],
    )
    attach(api, agent, "flaky", rx.url, eventRules=["EXECUTION_COMPLETED"])
    attach(api, agent, "down", closed_port_url(), eventRules=["EXECUTION_STARTED"])
    rx.script = [500]  # the first attempt to reach the receiver (flaky's) fails
    execution = run_scripted(api, advance, agent, inputs={"order": "O-1"}, metadata={"team": "ops"})
    advance(5)  # the retries: flaky's second attempt, down's second and third
    answer = routing_of(api, execution)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def decisions(body: dict[str, Any], event: str) -> dict[str, tuple[bool, str, str, str]]:
    (found,) = [e for e in body["events"] if e["event"] == event]
    return {
        d["integrationName"]: (d["sent"], d["rule"], d["reason"], d["outcome"])
        for d in found["decisions"]
    }


def test_each_attachment_says_why_the_completion_went_or_not(explained: dict[str, Any]) -> None:
    assert decisions(explained, "EXECUTION_COMPLETED") == {
        "only-failed": (
            False,
            "eventRules",
            "the event rules (EXECUTION_FAILED) do not list EXECUTION_COMPLETED",
            "not sent",
        ),
        "payments": (
            False,
            "metadataFilter.team",
            "metadataFilter.team wanted 'payments', the execution's was 'ops'",
            "not sent",
        ),
        "unhappy": (
            False,
            "fieldFilters[0]",
            'fieldFilters[0] `outcome ne "success"` was false (outcome is "success")',
            "not sent",
        ),
        "flaky": (
            True,
            "eventRules",
            "the event rules list EXECUTION_COMPLETED",
            "delivered after 2 attempts",
        ),
        "down": (
            False,
            "eventRules",
            "the event rules (EXECUTION_STARTED) do not list EXECUTION_COMPLETED",
            "not sent",
        ),
    }


def test_a_delivery_that_never_got_through_failed_after_its_attempts(
    explained: dict[str, Any],
) -> None:
    down = decisions(explained, "EXECUTION_STARTED")["down"]
    assert down[:3] == (True, "eventRules", "the event rules list EXECUTION_STARTED")
    assert down[3] == "failed after 3 attempts"
    assert explained["status"] == "completed"
    assert all(len(e["decisions"]) == 5 for e in explained["events"])  # every event, weighed


def test_another_organizations_execution_is_not_found(
    svc: tuple[Api, Advance], explained: dict[str, Any]
) -> None:
    api, _ = svc
    assert_error(routing_of(api, explained["executionId"], RIVAL_KEY), 404, "execution not found")
    assert_error(routing_of(api, str(uuid.uuid4())), 404, "execution not found")
    assert routing_of(api, explained["executionId"], EXEC_READ_KEY).status_code == 200
    assert_error(routing_of(api, explained["executionId"], "no-such-key-000"), 401)


def test_an_execution_whose_agent_has_no_attachment_lists_its_events_undecided(
    svc: tuple[Api, Advance],
) -> None:
    api, advance = svc
    execution = execute(api, api.ids("/agents")["steady"])
    advance(5)
    body = routing_of(api, execution).json()
    assert body["events"] and all(e["decisions"] == [] for e in body["events"])
    assert body["truncated"] is False


def test_decisions_go_with_their_integration(
    app: FastAPI, svc: tuple[Api, Advance], explained: dict[str, Any]
) -> None:
    api, _ = svc
    (flaky,) = [
        d["integrationId"]
        for e in explained["events"]
        for d in e["decisions"]
        if d["integrationName"] == "flaky" and e["event"] == "EXECUTION_COMPLETED"
    ]
    assert api.delete(f"/webhook-integrations/{flaky}").status_code == 204
    with app.state.db.read() as conn:
        left = routing.decisions_of_execution(conn, EXEC_ORG, explained["executionId"])
    assert left and {d.integration_name for d in left} == {
        "only-failed",
        "payments",
        "unhappy",
        "down",
    }


# -- a service on the wall clock -------------------------------------------------------


def test_on_the_wall_clock_there_is_no_clock_to_move(tmp_path: Path) -> None:
    wall = create_app(tmp_path / "wall.db", seed=EXEC_SEED)
    try:
        with TestClient(wall) as client:
            key = {"X-Api-Key": EXEC_KEY}
            assert client.get("/agentform/v1/clock", headers=key).json()["kind"] == "wall"
            moved = client.post("/agentform/v1/clock/advance", json={"duration": "1m"}, headers=key)
            assert_error(moved, 404, NOT_MANUAL)
    finally:
        wall.state.db.close()


def test_the_answer_is_bounded_and_says_when_it_was_cut(
    svc: tuple[Api, Advance], explained: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    api, _ = svc
    monkeypatch.setattr(routing, "MAX_DECISIONS", 3)
    cut = routing_of(api, explained["executionId"]).json()
    assert cut["truncated"] is True
    assert [e["eventId"] for e in cut["events"]] == [e["eventId"] for e in explained["events"][:3]]
    assert sum(len(e["decisions"]) for e in cut["events"]) == 3
