"""Hostile values in request bodies (docs/service/limits.md): each is a 400 with the
usual error body, and nothing is stored. Each of these answered 500, hung, or was
stored (and broke later) before the bounds of rules/values.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI

from tests.service.conftest import Api, assert_error
from tests.service.execution_support import RIVAL_KEY, module_app, service

app = module_app("bounded")


@pytest.fixture(scope="module")
def api(app: FastAPI) -> Iterator[Api]:
    with service(app) as (client, _):
        yield client


@pytest.fixture(scope="module")
def agent(api: Api) -> str:
    return api.ids("/agents")["scripted"]


def _raw(api: Api, path: str, text: str) -> Any:
    """Posts `text` as the JSON body as written (json.dumps cannot write 1e999)."""
    return api.post(path, content=text, headers={"Content-Type": "application/json"})


def _count(api: Api, path: str) -> int:
    total: int = api.get(path).json()["total"]
    return total


def _batch(agent: str, item: str, start_at: str = '"2030-01-01T00:00:00Z"', name: str = "b") -> str:
    return (
        f'{{"agentId": "{agent}", "name": {json.dumps(name)}, "startAt": {start_at}, '
        '"config": {"type": "timeBatching", "batchSize": 1, "batchInterval": 60}, '
        f'"items": [{item}]}}'
    )


TIMEOUTS = ["1e10", "1e308", "1e999", "Infinity", "-Infinity", "NaN"]


@pytest.mark.parametrize("value", TIMEOUTS)
def test_a_soft_timeout_the_service_cannot_hold_is_a_400(api: Api, agent: str, value: str) -> None:
    before = _count(api, "/executions")
    body = f'{{"executionOptions": {{"softTimeoutMins": {value}}}}}'
    response = _raw(api, f"/agents/{agent}/execute", body)
    assert_error(response, 400, "softTimeoutMins")
    assert _count(api, "/executions") == before


@pytest.mark.parametrize("value", TIMEOUTS)
def test_a_batch_item_with_such_a_soft_timeout_is_a_400(api: Api, agent: str, value: str) -> None:
    before = _count(api, "/execution-batches")
    item = f'{{"executionOptions": {{"softTimeoutMins": {value}}}}}'
    response = _raw(api, "/execution-batches", _batch(agent, item))
    assert_error(response, 400, "items[0].executionOptions.softTimeoutMins")
    assert _count(api, "/execution-batches") == before


def test_the_largest_soft_timeout_is_accepted(api: Api, agent: str) -> None:
    body = {"executionOptions": {"softTimeoutMins": 43_200}, "onCapacityLimit": "queue"}
    assert api.post(f"/agents/{agent}/execute", json=body).status_code == 202


def _nested(levels: int) -> str:
    return '{"a": ' * levels + "1" + "}" * levels


def test_inputs_nested_256_levels_are_a_400_in_execute_and_batch_items(
    api: Api, agent: str
) -> None:
    executions, batches = _count(api, "/executions"), _count(api, "/execution-batches")
    body = f'{{"inputs": {_nested(256)}}}'
    assert_error(_raw(api, f"/agents/{agent}/execute", body), 400, "inputs", "64 levels")
    response = _raw(api, "/execution-batches", _batch(agent, body))
    assert_error(response, 400, "items[0].inputs")
    assert _count(api, "/executions") == executions
    assert _count(api, "/execution-batches") == batches


def test_inputs_nested_64_levels_are_accepted(api: Api, agent: str) -> None:
    body = f'{{"inputs": {_nested(63)}, "onCapacityLimit": "queue"}}'
    assert _raw(api, f"/agents/{agent}/execute", body).status_code == 202


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_number_that_is_not_finite_in_inputs_is_a_400(api: Api, agent: str, value: str) -> None:
    before = _count(api, "/executions")
    body = f'{{"inputs": {{"list": [1, {{"x": {value}}}]}}}}'
    assert_error(_raw(api, f"/agents/{agent}/execute", body), 400, "inputs", "finite")
    body = f'{{"dynamicData": {{"x": {value}}}}}'
    assert_error(_raw(api, f"/agents/{agent}/execute", body), 400, "dynamicData")
    response = _raw(api, "/execution-batches", _batch(agent, f'{{"inputs": {{"x": {value}}}}}'))
    assert_error(response, 400, "items[0].inputs")
    assert _count(api, "/executions") == before


@pytest.mark.parametrize(
    "start_at", ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59-01:00", "1969-12-31T23:59:59Z"]
)
def test_a_start_outside_the_years_the_service_stores_is_a_400(
    api: Api, agent: str, start_at: str
) -> None:
    before = _count(api, "/execution-batches")
    response = _raw(api, "/execution-batches", _batch(agent, "{}", json.dumps(start_at)))
    assert_error(response, 400, "startAt", "1970")
    assert _count(api, "/execution-batches") == before


BAD_NAMES = ["", "   ", "a\x00b", "line\nbreak", "tab\there", "esc\x1b[31m", "del\x7f", "c1\x85"]

NAMED = [
    ("/agent-profile-pools", {}),
    ("/profile-groups", {}),
    ("/profiles", {}),
    ("/webhook-integrations", {"url": "http://127.0.0.1:9/hook"}),
    (
        "/vault/templates",
        {"kind": "custom", "fields": [{"type": "text", "label": "A", "required": False}]},
    ),
]


@pytest.mark.parametrize("bad", BAD_NAMES)
@pytest.mark.parametrize(("path", "rest"), NAMED, ids=[p for p, _ in NAMED])
def test_a_blank_name_or_one_with_control_characters_is_a_400(
    api: Api, path: str, rest: dict[str, Any], bad: str
) -> None:
    before = _count(api, path)
    assert_error(api.post(path, json={**rest, "name": bad}), 400, "name")
    assert _count(api, path) == before


@pytest.mark.parametrize("bad", BAD_NAMES)
def test_a_batch_named_so_is_a_400(api: Api, agent: str, bad: str) -> None:
    before = _count(api, "/execution-batches")
    assert_error(_raw(api, "/execution-batches", _batch(agent, "{}", name=bad)), 400, "name")
    assert _count(api, "/execution-batches") == before


def test_a_rename_to_a_name_with_a_newline_is_a_400(api: Api) -> None:
    pool = api.post("/agent-profile-pools", json={"name": "renamed-pool"}).json()["id"]
    response = api.patch(f"/agent-profile-pools/{pool}", json={"name": "a\nb"})
    assert_error(response, 400, "name")
    assert api.get(f"/agent-profile-pools/{pool}").json()["name"] == "renamed-pool"


def test_names_in_other_scripts_and_inner_spaces_are_accepted(api: Api) -> None:
    response = api.post("/profile-groups", json={"name": "Équipe de nuit 夜"})
    assert response.status_code == 201, response.text


@pytest.mark.parametrize("email", ["a\x00b@example.com", "a@exa\x1bmple.com", "a@b\x85c"])
def test_an_inbox_email_with_control_characters_is_a_400(api: Api, email: str) -> None:
    before = _count(api, "/profiles")
    response = api.post("/profiles", json={"name": "inbox-x", "inboxEmail": email})
    assert_error(response, 400, "inboxEmail")
    assert _count(api, "/profiles") == before


def _grouped(agent: str, name: str, group: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "agentId": agent,
        "name": name,
        "startAt": "2030-01-01T00:00:00Z",
        "config": {"type": "timeBatching", "batchSize": 1, "batchInterval": 60},
        "items": [{}],
    }
    if group is not None:
        body["concurrencyGroupId"] = group
    return body


def test_a_concurrency_group_must_be_one_of_the_organizations_batches(api: Api, agent: str) -> None:
    first = api.post("/execution-batches", json=_grouped(agent, "group-root")).json()
    joined = api.post("/execution-batches", json=_grouped(agent, "group-2", first["id"]))
    assert joined.status_code == 201, joined.text
    assert joined.json()["concurrencyGroupId"] == first["id"]
    rival = api.as_key(RIVAL_KEY)
    rival_agent = rival.ids("/agents")["rival-agent"]
    rival_batch = rival.post("/execution-batches", json=_grouped(rival_agent, "theirs")).json()
    before = _count(api, "/execution-batches")
    for group in (
        "99999999-9999-4999-8999-999999999999",  # no batch at all
        rival_batch["id"],  # another organization's batch
        joined.json()["id"],  # a batch, but of the group it joined, not a group of its own
    ):
        response = api.post("/execution-batches", json=_grouped(agent, "group-x", group))
        assert_error(response, 400, "concurrencyGroupId")
    assert _count(api, "/execution-batches") == before
