"""The 400 body names the parameter at fault once, the way a caller wrote it
(docs/service/contract.md#errors): one error per mistake, no doubled prefix, a list
filter by its name, a body that is not JSON said so in words."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from agentform.core.problems import problems_from
from agentform.rules.webhook_attachments import AttachmentSettings
from tests.service.conftest import Api, assert_error


def errors_of(response: Any) -> list[tuple[str, str]]:
    body = assert_error(response, 400)
    return [(e["parameter"], e["detail"]) for e in body["errors"]]


@pytest.fixture
def hook(api: Api) -> str:
    body = {"name": "params", "url": "http://127.0.0.1:9/hook"}
    return str(api.post("/webhook-integrations", json=body).json()["id"])


def test_an_event_rule_typo_is_one_error_with_a_suggestion(api: Api, hook: str) -> None:
    agent = api.ids("/agents")["checkout-agent"]
    path = f"/agents/{agent}/webhooks/{hook}"
    response = api.request("PUT", path, json={"eventRules": ["EXECUTION_COMPLETD"]})
    [(parameter, detail)] = errors_of(response)
    assert parameter == "eventRules.0"
    assert detail == "unknown event 'EXECUTION_COMPLETD' (did you mean 'EXECUTION_COMPLETED'?)"
    assert response.json()["message"] == f"{parameter}: {detail}"
    # An empty list is still refused, by itself.
    [(parameter, _)] = errors_of(api.request("PUT", path, json={"eventRules": []}))
    assert parameter == "eventRules"


def test_an_event_rule_typo_is_one_problem_for_the_provisioner_too() -> None:
    with pytest.raises(ValidationError) as caught:
        AttachmentSettings.model_validate({"eventRules": ["EXECUTION_COMPLETD"]})
    [problem] = problems_from(caught.value)
    assert str(problem) == (
        "eventRules.0: unknown event 'EXECUTION_COMPLETD' (did you mean 'EXECUTION_COMPLETED'?)"
    )


def test_a_header_problem_names_the_header_once(api: Api) -> None:
    body = {"name": "h", "url": "http://h/", "headers": {"X A": "v", "Host": "h", "X-B": "a\nb"}}
    errors = errors_of(api.post("/webhook-integrations", json=body))
    assert [p for p, _ in errors] == ["headers.X A", "headers.Host", "headers.X-B"]
    assert all(not d.startswith("headers") for _, d in errors), errors
    assert "a\nb" not in str(errors)


@pytest.mark.parametrize(
    ("path", "good"),
    [("/executions", "running"), ("/execution-batches", "running")],
)
def test_a_list_filter_is_named_without_its_index(api: Api, path: str, good: str) -> None:
    response = api.get(path, params={"status": [good, "runing"]})
    [(parameter, detail)] = errors_of(response)
    assert parameter == "status"
    assert "'runing'" in detail and f"(did you mean '{good}'?)" in detail
    assert response.json()["message"] == f"status: {detail}"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"data": {"name": "x", "url": "http://a/"}},
        {"content": b"name=x", "headers": {"content-type": "application/x-www-form-urlencoded"}},
    ],
)
def test_a_form_body_where_json_is_wanted_is_said_so(api: Api, kwargs: dict[str, Any]) -> None:
    [(parameter, detail)] = errors_of(api.post("/webhook-integrations", **kwargs))
    assert parameter == "body"
    assert detail == (
        "the body must be a JSON object, sent with Content-Type: application/json "
        "(this one is application/x-www-form-urlencoded)"
    )


def test_a_json_body_that_is_not_an_object_is_said_so(api: Api) -> None:
    [(parameter, detail)] = errors_of(api.post("/webhook-integrations", json=[1]))
    assert (parameter, detail) == ("body", "the body must be a JSON object, not an array")


def test_an_unknown_body_field_suggests_the_known_one(api: Api) -> None:
    agent = api.ids("/agents")["checkout-agent"]
    body = {"input": {"a": "1"}, "executionOptions": {"softTimeoutMin": 5}}
    errors = errors_of(api.post(f"/agents/{agent}/execute", json=body))
    assert sorted(errors) == [
        (
            "executionOptions.softTimeoutMin",
            "unknown field (did you mean 'softTimeoutMins'?)",
        ),
        ("input", "unknown field (did you mean 'inputs'?)"),
    ]
    far = {"name": "x", "url": "http://a/", "zzzzzz": 1}
    assert errors_of(api.post("/webhook-integrations", json=far)) == [("zzzzzz", "unknown field")]


def test_a_batch_items_unknown_field_suggests_the_known_one_too() -> None:
    from agentform.core.problems import RuleViolation
    from agentform.rules.execute import parse_execute_request

    with pytest.raises(RuleViolation) as caught:
        parse_execute_request({"metdata": {}}, "items[3]")
    assert [str(p) for p in caught.value.problems] == [
        "items[3].metdata: unknown field (did you mean 'metadata'?)"
    ]
