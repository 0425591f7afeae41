"""`POST /agents/{agentId}/execute`: every rule of an execute request
(docs/service/contract.md#execute-request, #executions), one test each, through HTTP.
A refused request writes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI

from agentform.service.http.auth import KEY_HEADERS
from tests.service.conftest import Api, assert_error
from tests.service.execution_support import (
    EXEC_KEY,
    EXEC_ORG,
    EXEC_READ_KEY,
    RIVAL_KEY,
    module_app,
    service,
)

UNKNOWN = "99999999-9999-4999-8999-999999999999"


app = module_app("execute")


@pytest.fixture(scope="module")
def api(app: FastAPI) -> Iterator[Api]:
    with service(app) as (client, _):
        yield client


@pytest.fixture(scope="module")
def ids(api: Api) -> dict[str, str]:
    agents = api.ids("/agents")
    profiles = api.ids("/profiles")
    pool = api.post("/agent-profile-pools", json={"name": "pool", "allowConcurrentUse": True})
    pool = pool.json()["id"]
    api.post(f"/agent-profile-pools/{pool}/members", json={"profileIds": [profiles["e2"]]})
    group = api.post("/profile-groups", json={"name": "group"}).json()["id"]
    rival = api.as_key(RIVAL_KEY)
    staged = api.post("/temp-files", files=[("files", ("orders.csv", b"a,b"))]).json()
    rival_staged = rival.post("/temp-files", files=[("files", ("x.csv", b"1"))]).json()
    return {
        "agent": agents["scripted"],
        "profile": profiles["e1"],
        "pool": pool,
        "group": group,
        "file": staged["tempFiles"][0]["id"],
        "rival_agent": rival.ids("/agents")["rival-agent"],
        "rival_profile": rival.ids("/profiles")["rival-profile"],
        "rival_file": rival_staged["tempFiles"][0]["id"],
    }


def count(app: FastAPI) -> int:
    with app.state.db.read() as conn:
        return int(conn.execute("SELECT count(*) FROM executions").fetchone()[0])


def post(api: Api, agent: str, body: Any, **kw: Any) -> Any:
    return api.post(f"/agents/{agent}/execute", json=body, **kw)


def refused(
    app: FastAPI, api: Api, agent: str, body: Any, parameter: str, *words: str
) -> dict[str, Any]:
    before = count(app)
    err = assert_error(post(api, agent, body), 400, *words)
    assert [e["parameter"] for e in err["errors"]] == [parameter], err
    assert count(app) == before, "a refused execute wrote something"
    return err


def test_202_with_the_execution_id_and_status_and_the_execution_exists(
    api: Api, ids: dict[str, str]
) -> None:
    r = post(api, ids["agent"], {"inputs": {"order": "B-7"}, "metadata": {"team": "ops"}})
    assert r.status_code == 202, r.text
    body = r.json()
    assert set(body) == {"executionId", "status"} and body["status"] == "starting"
    assert "deprecation" not in r.headers
    got = api.get(f"/executions/{body['executionId']}").json()
    assert got["agentId"] == ids["agent"] and got["organizationId"] == EXEC_ORG
    assert got["inputs"] == {"order": "B-7"} and got["metadata"] == {"team": "ops"}


def test_every_field_is_optional_even_the_body(api: Api, ids: dict[str, str]) -> None:
    assert post(api, ids["agent"], {}).status_code == 202
    assert api.post(f"/agents/{ids['agent']}/execute").status_code == 202


@pytest.mark.parametrize("header", KEY_HEADERS)
def test_both_key_headers_work(api: Api, ids: dict[str, str], header: str) -> None:
    assert post(api.as_key(EXEC_KEY, header), ids["agent"], {}).status_code == 202


def test_a_read_key_may_not_execute(app: FastAPI, api: Api, ids: dict[str, str]) -> None:
    before = count(app)
    assert_error(post(api.as_key(EXEC_READ_KEY), ids["agent"], {}), 403)
    assert count(app) == before


def test_an_unknown_or_foreign_agent_is_404_and_a_bad_id_400(api: Api, ids: dict[str, str]) -> None:
    assert_error(post(api, UNKNOWN, {}), 404)
    assert_error(post(api, ids["rival_agent"], {}), 404)
    assert_error(post(api, "not-a-uuid", {}), 400)


def test_an_unknown_field_is_refused(app: FastAPI, api: Api, ids: dict[str, str]) -> None:
    refused(app, api, ids["agent"], {"profileId": ids["profile"]}, "profileId", "unknown field")


def test_profile_and_pool_together_are_refused(app: FastAPI, api: Api, ids: dict[str, str]) -> None:
    body = {"agentProfileId": ids["profile"], "agentProfilePoolId": ids["pool"]}
    refused(app, api, ids["agent"], body, "agentProfilePoolId", "agentProfileId")


@pytest.mark.parametrize(
    ("field", "which"),
    [
        ("agentProfileId", UNKNOWN),
        ("agentProfileId", "rival_profile"),
        ("agentProfilePoolId", UNKNOWN),
        ("agentProfilePoolId", "group"),  # a profile group is not a pool
    ],
)
def test_a_profile_or_pool_must_name_something_of_the_organization(
    app: FastAPI, api: Api, ids: dict[str, str], field: str, which: str
) -> None:
    refused(app, api, ids["agent"], {field: ids.get(which, which)}, field)


def test_a_profile_or_a_pool_of_the_organization_is_accepted(api: Api, ids: dict[str, str]) -> None:
    assert post(api, ids["agent"], {"agentProfileId": ids["profile"]}).status_code == 202
    assert post(api, ids["agent"], {"agentProfilePoolId": ids["pool"]}).status_code == 202


def test_version_must_be_one_of_the_agents_and_defaults_to_the_published(
    app: FastAPI, api: Api, ids: dict[str, str]
) -> None:
    refused(app, api, ids["agent"], {"version": 9}, "version", "9")
    published = post(api, ids["agent"], {}).json()["executionId"]
    assert api.get(f"/executions/{published}").json()["version"] == 2
    chosen = post(api, ids["agent"], {"version": 3}).json()["executionId"]
    assert api.get(f"/executions/{chosen}").json()["version"] == 3


@pytest.mark.parametrize("metadata", [{"n": 1}, {"ok": True}, {"x": None}, ["a"]])
def test_metadata_values_must_be_strings(
    app: FastAPI, api: Api, ids: dict[str, str], metadata: Any
) -> None:
    err = assert_error(post(api, ids["agent"], {"metadata": metadata}), 400)
    assert err["errors"][0]["parameter"].startswith("metadata")


def test_temp_files_must_be_staged_by_the_organization(
    app: FastAPI, api: Api, ids: dict[str, str]
) -> None:
    ok = post(api, ids["agent"], {"tempFiles": [{"id": ids["file"], "name": "orders.csv"}]})
    assert ok.status_code == 202
    foreign = {"tempFiles": [{"id": ids["rival_file"], "name": "x.csv"}]}
    refused(app, api, ids["agent"], foreign, "tempFiles.0.id", "staged")
    unknown = {"tempFiles": [{"id": UNKNOWN, "name": "x.csv"}]}
    refused(app, api, ids["agent"], unknown, "tempFiles.0.id")
    renamed = {"tempFiles": [{"id": ids["file"], "name": "other.csv"}]}
    refused(app, api, ids["agent"], renamed, "tempFiles.0.name", "orders.csv")


@pytest.mark.parametrize(
    ("item", "parameter"),
    [
        ({"id": "FILE", "name": "orders.csv", "size": 3}, "tempFiles.0.size"),
        ({"id": "FILE"}, "tempFiles.0.name"),
        ({"id": "nope", "name": "orders.csv"}, "tempFiles.0.id"),
    ],
)
def test_temp_file_items_are_exactly_id_and_name(
    app: FastAPI, api: Api, ids: dict[str, str], item: dict[str, Any], parameter: str
) -> None:
    item = {k: ids["file"] if v == "FILE" else v for k, v in item.items()}
    refused(app, api, ids["agent"], {"tempFiles": [item]}, parameter)


@pytest.mark.parametrize(
    ("options", "parameter"),
    [
        ({"softTimeoutMins": 0}, "executionOptions.softTimeoutMins"),
        ({"softTimeoutMins": -2}, "executionOptions.softTimeoutMins"),
        ({"softTimeoutMins": "5"}, "executionOptions.softTimeoutMins"),
        ({"variantKey": 3}, "executionOptions.variantKey"),
        ({"maxSteps": 3}, "executionOptions.maxSteps"),
    ],
)
def test_execution_options_are_only_a_positive_soft_timeout_and_a_variant_key(
    app: FastAPI, api: Api, ids: dict[str, str], options: dict[str, Any], parameter: str
) -> None:
    refused(app, api, ids["agent"], {"executionOptions": options}, parameter)


def test_valid_execution_options_are_accepted(api: Api, ids: dict[str, str]) -> None:
    options = {"softTimeoutMins": 0.5, "variantKey": "eu"}
    assert post(api, ids["agent"], {"executionOptions": options}).status_code == 202


def test_dynamic_data_is_merged_under_inputs_and_answered_as_deprecated(
    api: Api, ids: dict[str, str]
) -> None:
    body = {"inputs": {"order": "I-1"}, "dynamicData": {"order": "D-1", "extra": "d"}}
    r = post(api, ids["agent"], body)
    assert r.status_code == 202 and r.headers["Deprecation"] == "true"
    got = api.get(f"/executions/{r.json()['executionId']}").json()
    assert got["inputs"] == {"order": "I-1", "extra": "d"}


@pytest.mark.parametrize("value", ["wait", 1, None])
def test_on_capacity_limit_is_reject_or_queue(
    app: FastAPI, api: Api, ids: dict[str, str], value: Any
) -> None:
    if value is None:  # null is the same as leaving it out
        assert post(api, ids["agent"], {"onCapacityLimit": None}).status_code == 202
        return
    refused(app, api, ids["agent"], {"onCapacityLimit": value}, "onCapacityLimit")


def test_every_problem_is_reported_at_once(app: FastAPI, api: Api, ids: dict[str, str]) -> None:
    err = assert_error(post(api, ids["agent"], {"agentProfileId": UNKNOWN, "version": 7}), 400)
    assert [e["parameter"] for e in err["errors"]] == ["agentProfileId", "version"]


def test_a_body_that_is_not_an_object_is_refused(api: Api, ids: dict[str, str]) -> None:
    assert_error(post(api, ids["agent"], [1, 2]), 400)
    bad = api.post(
        f"/agents/{ids['agent']}/execute",
        content=b"{nope",
        headers={"Content-Type": "application/json"},
    )
    assert_error(bad, 400)
