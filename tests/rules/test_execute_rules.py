"""The execute-request rules (docs/service/contract.md#execute-request, #executions):
shape, organization checks, prefixes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from agentform.core.problems import Problem, RuleViolation
from agentform.rules.execute import (
    AgentVersions,
    ExecuteRequest,
    check_execute_request,
    effective_version,
    parse_execute_request,
    validate_execute_request,
)

PROFILE = "6a0d3c5e-0000-4000-8000-000000000001"
POOL = "6a0d3c5e-0000-4000-8000-000000000002"
FILE = "6a0d3c5e-0000-4000-8000-000000000003"
UNKNOWN = "6a0d3c5e-0000-4000-8000-0000000000ff"
AGENT = AgentVersions(versions=[1, 2, 3], published_version=2)


@dataclass
class Lookup:
    profiles: set[str] = field(default_factory=lambda: {PROFILE})
    pools: set[str] = field(default_factory=lambda: {POOL})
    files: dict[str, str] = field(default_factory=lambda: {FILE: "orders.csv"})

    def profile_exists(self, profile_id: str) -> bool:
        return profile_id in self.profiles

    def pool_exists(self, pool_id: str) -> bool:
        return pool_id in self.pools

    def staged_file_name(self, file_id: str) -> str | None:
        return self.files.get(file_id)


def problems_of(data: Any, prefix: str = "") -> list[Problem]:
    with pytest.raises(RuleViolation) as caught:
        validate_execute_request(data, AGENT, Lookup(), prefix)
    return caught.value.problems


def test_every_field_is_optional() -> None:
    request = validate_execute_request({}, AGENT, Lookup())
    assert request.as_sent() == {}
    assert effective_version(request, AGENT) == 2
    assert request.merged_inputs() == {}
    assert not request.queues_at_capacity and not request.uses_dynamic_data


def test_a_full_request_is_accepted_and_kept_as_sent() -> None:
    body = {
        "agentProfilePoolId": POOL,
        "inputs": {"order": "A-1", "n": 3},
        "metadata": {"team": "payments"},
        "tempFiles": [{"id": FILE, "name": "orders.csv"}],
        "executionOptions": {"softTimeoutMins": 0.5, "variantKey": "eu"},
        "version": 3,
        "onCapacityLimit": "queue",
    }
    request = validate_execute_request(body, AGENT, Lookup())
    assert request.as_sent() == body
    assert effective_version(request, AGENT) == 3
    assert request.queues_at_capacity
    assert request.soft_timeout_mins == 0.5


def test_dynamic_data_is_merged_under_inputs_inputs_win() -> None:
    request = parse_execute_request({"inputs": {"a": 1}, "dynamicData": {"a": 0, "b": 2}})
    assert request.uses_dynamic_data
    assert request.merged_inputs() == {"a": 1, "b": 2}


@pytest.mark.parametrize(
    ("body", "parameter", "words"),
    [
        ({"colour": "red"}, "colour", "unknown field"),
        ({"executionOptions": {"maxSteps": 3}}, "executionOptions.maxSteps", "unknown field"),
        ({"tempFiles": [{"id": FILE, "name": "a", "size": 1}]}, "tempFiles.0.size", "unknown"),
        ({"metadata": {"team": 1}}, "metadata.team", "string"),
        ({"metadata": "team"}, "metadata", "dictionary"),
        ({"executionOptions": {"softTimeoutMins": 0}}, "executionOptions.softTimeoutMins", "0"),
        ({"executionOptions": {"softTimeoutMins": -1}}, "executionOptions.softTimeoutMins", ""),
        ({"executionOptions": {"softTimeoutMins": "5"}}, "executionOptions.softTimeoutMins", ""),
        ({"executionOptions": {"variantKey": 5}}, "executionOptions.variantKey", "string"),
        ({"tempFiles": [{"id": FILE}]}, "tempFiles.0.name", "required"),
        ({"tempFiles": [{"id": "x", "name": "a"}]}, "tempFiles.0.id", "not a UUID"),
        ({"agentProfileId": "nope"}, "agentProfileId", "not a UUID"),
        ({"version": "2"}, "version", "integer"),
        ({"version": True}, "version", "integer"),
        ({"onCapacityLimit": "wait"}, "onCapacityLimit", "queue"),
        ({"inputs": [1]}, "inputs", "dictionary"),
    ],
)
def test_shape_rules_name_the_field(body: dict[str, Any], parameter: str, words: str) -> None:
    problems = problems_of(body)
    assert [p.parameter for p in problems] == [parameter]
    assert words in problems[0].detail


def test_profile_and_pool_together_are_refused() -> None:
    (problem,) = problems_of({"agentProfileId": PROFILE, "agentProfilePoolId": POOL})
    assert problem.parameter == "agentProfilePoolId"
    assert "agentProfileId" in problem.detail


@pytest.mark.parametrize("field_name", ["agentProfileId", "agentProfilePoolId"])
def test_a_profile_or_pool_must_be_the_organizations(field_name: str) -> None:
    (problem,) = problems_of({field_name: UNKNOWN})
    assert problem.parameter == field_name and UNKNOWN in problem.detail
    # a pool id is not a profile id, nor the other way round
    other = POOL if field_name == "agentProfileId" else PROFILE
    (problem,) = problems_of({field_name: other})
    assert problem.parameter == field_name


def test_version_must_be_one_of_the_agents() -> None:
    (problem,) = problems_of({"version": 7})
    assert problem.parameter == "version"
    assert "7" in problem.detail and "1, 2, 3" in problem.detail


def test_temp_files_must_be_staged_by_the_organization_under_that_name() -> None:
    problems = problems_of(
        {
            "tempFiles": [
                {"id": FILE, "name": "orders.csv"},
                {"id": UNKNOWN, "name": "x.csv"},
                {"id": FILE, "name": "renamed.csv"},
            ]
        }
    )
    assert [p.parameter for p in problems] == ["tempFiles.1.id", "tempFiles.2.name"]
    assert "staged" in problems[0].detail
    assert "orders.csv" in problems[1].detail


def test_every_organization_problem_is_reported_at_once() -> None:
    problems = problems_of({"agentProfileId": UNKNOWN, "version": 9, "tempFiles": []})
    assert [p.parameter for p in problems] == ["agentProfileId", "version"]


def test_problems_carry_the_prefix_of_a_batch_item() -> None:
    (shape,) = problems_of({"agentProfilePoolId": "bad"}, prefix="items[17]")
    assert str(shape).startswith("items[17].agentProfilePoolId: ")
    (org,) = problems_of({"agentProfilePoolId": UNKNOWN}, prefix="items[17]")
    assert org.parameter == "items[17].agentProfilePoolId"
    (body,) = problems_of([1, 2], prefix="items[3]")
    assert body.parameter == "items[3]"


def test_check_is_usable_on_a_request_parsed_elsewhere() -> None:
    request = ExecuteRequest.model_validate({"version": 5})
    assert check_execute_request(request, AGENT, Lookup()) == [
        Problem("version", "the agent has no version 5 (versions: 1, 2, 3)")
    ]
