"""Executions run their agent's script on the clock
(docs/service/contract.md#executions, #events-and-payloads): statuses, events with
exactly the contract's payload fields, pause, resume, cancel, user messages, the soft
timeout, results, produced files. All on a manual clock."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
from fastapi import FastAPI

from agentform.rules.webhook_events import EVENT_PAYLOAD_FIELDS
from tests.service import clocked
from tests.service.clocked import Advance
from tests.service.conftest import Api, assert_error
from tests.service.execution_support import (
    event_log,
    event_names,
    execute,
    module_app,
    service,
    status_of,
)

api, advance, agents = clocked.api, clocked.advance, clocked.agents  # from `svc`, below


app = module_app("lifecycle")


@pytest.fixture(scope="module")
def svc(app: FastAPI) -> Iterator[tuple[Api, Advance]]:
    with service(app) as running:
        yield running


def assert_seed_payloads(app: FastAPI, execution_id: str) -> None:
    for event, payload in event_log(app, execution_id):
        fields = EVENT_PAYLOAD_FIELDS[event]
        assert set(fields.required) <= set(payload), (event, payload)
        assert set(payload) <= {*fields.required, *fields.optional}, (event, payload)


def test_a_script_runs_on_the_clock_through_every_status_and_event(
    app: FastAPI, api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    eid = execute(api, agents["scripted"], inputs={"order": "O-9"}, metadata={"team": "ops"})
    assert status_of(api, eid) == "starting" and event_names(app, eid) == []
    advance(0)
    assert status_of(api, eid) == "running"
    assert event_names(app, eid) == [
        "EXECUTION_STARTED",
        "EXECUTION_STEP_STARTED",
        "EXECUTION_TRANSITIONED",
        "EXECUTION_REASONING_ADDED",
        "EXECUTION_MESSAGE_ADDED",
        "EXECUTION_ACTION_STARTED",
    ]
    advance(0.499)
    assert len(event_names(app, eid)) == 6  # the action takes 0.5 s
    advance(0.001)
    assert event_names(app, eid)[-1] == "EXECUTION_ACTION_COMPLETED"
    advance(1.5)
    assert status_of(api, eid) == "awaiting_confirmation"
    assert event_names(app, eid)[7:] == [
        "EXECUTION_STEP_PROCESSED",
        "EXECUTION_STEP_STARTED",
        "EXECUTION_ACTION_STARTED",
        "EXECUTION_ACTION_FAILED",
        "EXECUTION_PLAYWRIGHT_SCRIPT_GENERATED",
        "EXECUTION_FILE_ADDED",
        "EXECUTION_WORKFLOW_UPDATED",
        "EXECUTION_STEP_PROCESSED",
        "EXECUTION_AWAITING_CONFIRMATION",
    ]
    advance(60)  # awaiting confirmation waits for a user message, however long
    assert status_of(api, eid) == "awaiting_confirmation"
    r = api.post(f"/executions/{eid}/user-messages", json={"message": "go ahead"})
    assert r.status_code == 202 and r.json() == {"executionId": eid, "status": "running"}
    advance(0.999)
    assert status_of(api, eid) == "running"
    advance(0.001)
    assert status_of(api, eid) == "completed"
    names = event_names(app, eid)
    assert names[16:] == [
        "USER_MESSAGE_RECEIVED",
        "EXECUTION_RESUMED",
        "EXECUTION_STEP_STARTED",
        "EXECUTION_TRANSITIONED",
        "EXECUTION_STEP_PROCESSED",
        "EXECUTION_COMPLETED",
    ]
    assert_seed_payloads(app, eid)
    log = dict(event_log(app, eid))
    assert log["EXECUTION_COMPLETED"] == {
        "result": {"order": "O-9"},
        "reasoning": "all done",
        "outcome": "success",
    }
    assert log["EXECUTION_ACTION_FAILED"]["os_error"] == {"message": "ENOSPC"}
    assert log["EXECUTION_AWAITING_CONFIRMATION"] == {"reason": "Confirm order O-9"}
    assert log["USER_MESSAGE_RECEIVED"]["execution_was"] == "awaiting_confirmation"
    assert log["USER_MESSAGE_RECEIVED"]["message"] == "go ahead"


def test_the_execution_object_has_the_api_fields_and_what_the_public_sdk_requires(
    api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    eid = execute(api, agents["steady"], metadata={"k": "v"})
    advance(3)
    got = api.get(f"/executions/{eid}").json()
    assert got["status"] == "completed"
    for field in ("id", "agentId", "organizationId", "version", "inputs", "metadata"):
        assert field in got
    assert got["createdAt"].endswith("Z") and got["startedAt"] and got["terminalAt"]
    assert got["workflowId"] == got["agentId"] == agents["steady"]
    assert got["agentName"] == got["workflowName"] == "steady"
    assert got["humanLabels"] == [] and got["comments"] == [] and got["hasBeenRerun"] is False
    assert got["workflowVersionId"] and got["workflowVersion"] == 1
    assert got["result"] == {"steady": True}
    assert got["executionResult"]["outcome"] == "success"
    assert got["duration"] == 3.0


def test_an_agent_without_a_script_completes_after_one_step_with_an_empty_result(
    app: FastAPI, api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    eid = execute(api, agents["plain"])
    advance(0.5)
    assert status_of(api, eid) == "running"
    advance(0.5)
    assert status_of(api, eid) == "completed"
    assert event_log(app, eid) == [
        ("EXECUTION_STARTED", {}),
        ("EXECUTION_STEP_STARTED", {"step": 1}),
        ("EXECUTION_STEP_PROCESSED", {"step": 1}),
        ("EXECUTION_COMPLETED", {"result": {}, "reasoning": "", "outcome": "success"}),
    ]


def test_an_agent_succeeds_or_fails_by_input(
    app: FastAPI, api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    eid = execute(api, agents["scripted"], inputs={"order": "F-1", "outcome": "fail"})
    advance(2)
    api.post(f"/executions/{eid}/user-messages", json={"message": "ok"})
    advance(1)
    got = api.get(f"/executions/{eid}").json()
    assert got["status"] == "failed" and "result" not in got
    assert got["executionResult"]["outcome"] == "failure"
    assert event_log(app, eid)[-1] == ("EXECUTION_FAILED", {"reason": "order F-1 failed"})


def test_a_missing_input_fails_the_execution_saying_which(
    app: FastAPI, api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    eid = execute(api, agents["needs-input"])
    advance(0)
    assert status_of(api, eid) == "failed"
    (name, payload) = event_log(app, eid)[-1]
    assert name == "EXECUTION_FAILED" and "input 'x'" in payload["reason"]


def test_pause_stops_the_clock_for_it_and_resume_goes_on_where_it_was(
    app: FastAPI, api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    eid = execute(api, agents["steady"])
    advance(1.25)  # 0.75 s left of step 2
    r = api.post(f"/executions/{eid}/pause")
    assert r.status_code == 200 and r.json() == {"executionId": eid, "status": "paused"}
    assert event_log(app, eid)[-1] == (
        "EXECUTION_PAUSED",
        {"reason": "paused through the API", "paused_by": "admin"},
    )
    before = event_names(app, eid)
    advance(30)
    assert status_of(api, eid) == "paused" and event_names(app, eid) == before
    assert api.get(f"/executions/{eid}").json()["pausedBy"] == "admin"
    r = api.post(f"/executions/{eid}/resume")
    assert r.status_code == 200 and r.json() == {"executionId": eid, "status": "running"}
    assert event_log(app, eid)[-1] == ("EXECUTION_RESUMED", {"reason": "resumed through the API"})
    advance(0.749)
    assert event_names(app, eid)[-1] == "EXECUTION_RESUMED"
    advance(0.001)  # step 2 is processed and step 3 starts
    assert event_log(app, eid)[-3:] == [
        ("EXECUTION_STEP_PROCESSED", {"step": 2}),
        ("EXECUTION_STEP_STARTED", {"step": 3}),
        ("EXECUTION_MESSAGE_ADDED", {"message": "step 3"}),
    ]
    advance(1)
    assert status_of(api, eid) == "completed"
    assert_seed_payloads(app, eid)


def test_cancel_ends_it_naming_the_key_and_nothing_more_happens(
    app: FastAPI, api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    eid = execute(api, agents["steady"])
    advance(1)
    r = api.post(f"/executions/{eid}/cancel")
    assert r.status_code == 200 and r.json() == {"executionId": eid, "status": "cancelled"}
    assert event_log(app, eid)[-1] == (
        "EXECUTION_CANCELLED",
        {"reason": "cancelled through the API", "cancelled_by": "admin"},
    )
    before = event_names(app, eid)
    advance(10)
    assert status_of(api, eid) == "cancelled" and event_names(app, eid) == before
    got = api.get(f"/executions/{eid}").json()
    assert got["cancelledBy"] == "admin" and got["terminalAt"]


def test_a_paused_execution_can_be_cancelled(
    api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    eid = execute(api, agents["steady"])
    advance(0.5)
    api.post(f"/executions/{eid}/pause")
    assert api.post(f"/executions/{eid}/cancel").json()["status"] == "cancelled"


@pytest.mark.parametrize(
    ("when", "call"),
    [
        ("starting", "pause"),
        ("starting", "resume"),
        ("running", "resume"),
        ("awaiting_confirmation", "pause"),
        ("awaiting_confirmation", "resume"),
        ("paused", "pause"),
        ("completed", "pause"),
        ("completed", "resume"),
        ("completed", "cancel"),
        ("cancelled", "cancel"),
        ("cancelled", "resume"),
    ],
)
def test_a_call_the_status_does_not_allow_is_409_and_changes_nothing(
    app: FastAPI, api: Api, advance: Advance, agents: dict[str, str], when: str, call: str
) -> None:
    eid = execute(api, agents["scripted"])
    reach: dict[str, list[Callable[[], object]]] = {  # the steps, in order
        "starting": [],
        "running": [lambda: advance(0)],
        "awaiting_confirmation": [lambda: advance(2)],
        "paused": [lambda: advance(0), lambda: api.post(f"/executions/{eid}/pause")],
        "completed": [
            lambda: advance(2),
            lambda: api.post(f"/executions/{eid}/user-messages", json={"message": "y"}),
            lambda: advance(1),
        ],
        "cancelled": [lambda: api.post(f"/executions/{eid}/cancel")],
    }
    for step in reach[when]:
        step()
    assert status_of(api, eid) == when
    before = event_names(app, eid)
    assert_error(api.post(f"/executions/{eid}/{call}"), 409, when)
    assert status_of(api, eid) == when and event_names(app, eid) == before
    api.post(f"/executions/{eid}/cancel")  # leave nothing running for the next test


def test_a_user_message_to_a_running_execution_is_recorded_and_it_runs_on(
    app: FastAPI, api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    eid = execute(api, agents["steady"])
    advance(0.5)
    r = api.post(f"/executions/{eid}/user-messages", json={"message": "hurry"})
    assert r.status_code == 202 and r.json()["status"] == "running"
    name, payload = event_log(app, eid)[-1]
    assert name == "USER_MESSAGE_RECEIVED"
    assert payload["execution_was"] == "running" and payload["injected_into"] == "next_step"
    assert payload["user_id"]
    advance(3)
    assert status_of(api, eid) == "completed"


def test_user_messages_to_an_ended_execution_or_with_a_bad_body_are_refused(
    api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    eid = execute(api, agents["plain"])
    for body, field in (({}, "message"), ({"message": ""}, "message"), ({"message": 3}, "message")):
        err = assert_error(api.post(f"/executions/{eid}/user-messages", json=body), 400)
        assert err["errors"][0]["parameter"] == field
    extra = api.post(f"/executions/{eid}/user-messages", json={"message": "m", "x": 1})
    assert_error(extra, 400, "unknown field")
    advance(1)
    assert_error(api.post(f"/executions/{eid}/user-messages", json={"message": "late"}), 409)


def test_the_soft_timeout_fails_an_execution_that_runs_too_long(
    app: FastAPI, api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    eid = execute(api, agents["scripted"], executionOptions={"softTimeoutMins": 0.05})
    advance(2.9)  # awaiting confirmation; 3 s is the timeout
    assert status_of(api, eid) == "awaiting_confirmation"
    advance(0.1)
    assert status_of(api, eid) == "failed"
    name, payload = event_log(app, eid)[-1]
    assert name == "EXECUTION_FAILED" and "soft timeout of 0.05 minutes" in payload["reason"]
    fast = execute(api, agents["plain"], executionOptions={"softTimeoutMins": 1})
    advance(120)  # done long before its timeout: the timeout does nothing
    assert status_of(api, fast) == "completed"
    assert event_names(app, fast)[-1] == "EXECUTION_COMPLETED"


def test_the_soft_timeout_counts_a_pause_too(
    api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    eid = execute(api, agents["steady"], executionOptions={"softTimeoutMins": 0.05})
    advance(1)
    api.post(f"/executions/{eid}/pause")
    advance(2)
    assert status_of(api, eid) == "failed"


def test_a_produced_file_is_downloadable_through_its_presigned_link_until_it_expires(
    app: FastAPI, api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    eid = execute(api, agents["scripted"], inputs={"order": "Z-1"})
    advance(2)
    payload = dict(event_log(app, eid))["EXECUTION_FILE_ADDED"]
    assert payload["file_name"] == "report-Z-1.txt" and payload["mime_type"] == "text/plain"
    assert payload["file_size"] == len(b"report of Z-1") and payload["source"] == "agent"
    link = urlsplit(payload["presigned_url"])
    assert link.path == f"/execution-files/{payload['file_id']}"
    path = f"{link.path}?{link.query}"
    got = api.client.get(path)  # no API key: the link is the credential
    assert got.status_code == 200 and got.content == b"report of Z-1"
    assert got.headers["content-type"].startswith("text/plain")
    assert "report-Z-1.txt" in got.headers["content-disposition"]
    query = parse_qs(link.query)
    forged = (
        f"{link.path}?expires={int(query['expires'][0]) + 3600}&signature={query['signature'][0]}"
    )
    assert_error(api.client.get(forged), 403, "signature")
    other = f"/execution-files/{eid}?{link.query}"  # the signature names its file
    assert_error(api.client.get(other), 403)
    advance(3601)
    assert_error(api.client.get(path), 403, "expired")
    api.post(f"/executions/{eid}/cancel")


def test_unknown_and_foreign_executions_are_404(api: Api, agents: dict[str, str]) -> None:
    from tests.service.execution_support import RIVAL_KEY

    eid = execute(api, agents["plain"])
    rival = api.as_key(RIVAL_KEY)
    assert_error(rival.get(f"/executions/{eid}"), 404)
    assert_error(rival.post(f"/executions/{eid}/cancel"), 404)
    assert_error(api.get("/executions/99999999-9999-4999-8999-999999999999"), 404)
    assert_error(api.get("/executions/nope"), 400)
