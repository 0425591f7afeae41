"""Evaluating rules: several rules on one change evaluated together, and alone when
one of them fails; `matches` is RE2's (linear, whatever the pattern); the
iteration budget; sensitive values only as tokens."""

from __future__ import annotations

from typing import Any

import yaml

from agentform.policies.expressions import SECRET, activation, compile_expression
from agentform.policies.judge import Subjects, verdicts_of
from agentform.policies.loading import load_policies
from agentform.policies.sources import Source

BASE = {
    "workspace": "w",
    "environment": "prod",
    "organization": {"id": "o", "name": "o"},
    "plan": {"summary": {}},
}


def change(**after: Any) -> dict[str, Any]:
    return {
        "kind": "webhooks",
        "name": "hook",
        "address": "webhooks/hook",
        "action": "create",
        "before": None,
        "after": {"name": "hook", **after},
        "fields": sorted(after),
        "reason": "not in live",
    }


def verdicts(rules: list[dict[str, Any]], *changes: dict[str, Any]) -> list[tuple[str, str]]:
    text = yaml.safe_dump({"rules": [{"level": "mandatory", "message": "'m'", **r} for r in rules]})
    policies = load_policies([Source("policies/r.yaml", text)])
    found = verdicts_of(policies, BASE, Subjects.given(list(changes)))
    return [(v.rule, v.outcome) for v in found.violations]


def test_rules_of_one_change_keep_their_own_outcomes_when_one_fails() -> None:
    rules = [
        {"name": "url", "deny": "change.after.url.startsWith('http:')"},
        {"name": "missing", "deny": "change.after.payloadVersion == 'v1'"},  # no such key
        {"name": "fine", "deny": "false"},
    ]
    assert verdicts(rules, change(url="http://a")) == [("url", "violated"), ("missing", "error")]
    assert verdicts(rules, change(url="https://a", payloadVersion="v1")) == [
        ("missing", "violated")
    ]


def test_matches_is_re2_whatever_the_pattern_and_only_outside_strings() -> None:
    catastrophic = compile_expression("change.after.url.matches('^(a+)+$')")
    value, error = catastrophic.evaluate(
        activation({"change": {"after": {"url": "a" * 50_000 + "b"}}})
    )
    assert (value, error) == (False, None)  # a backtracking engine would not return
    literal = compile_expression("'x.matches(y)' + string(change.name.matches('^h'))")
    assert literal.evaluate(activation({"change": {"name": "hook"}})) == ("x.matches(y)true", None)
    bad = compile_expression("change.name.matches('(')")
    value, error = bad.evaluate(activation({"change": {"name": "hook"}}))
    assert value is None and error is not None and "missing )" in error


def test_the_iteration_budget_is_an_error_of_the_rule() -> None:
    nested = compile_expression("change.fields.all(a, change.fields.all(b, a != '' || b != ''))")
    values = activation({"change": {"fields": [str(i) for i in range(1_000)]}})
    value, error = nested.evaluate(values)
    assert value is None and error == "Iteration budget exceeded"


def test_a_secret_token_never_reaches_a_message() -> None:
    rules = [
        {
            "name": "leak",
            "deny": "true",
            "message": "'value: ' + change.after.headers['A'] + ', ' + change.after.headers.A",
        }
    ]
    text = yaml.safe_dump({"rules": [{"level": "advisory", **r} for r in rules]})
    policies = load_policies([Source("policies/r.yaml", text)])
    found = verdicts_of(policies, BASE, Subjects.given([change(headers={"A": SECRET})]))
    (violation,) = found.violations
    assert violation.message == "value: (sensitive), (sensitive)"
    assert SECRET not in violation.message


def test_an_index_by_a_name_in_quotes_reads_that_field() -> None:
    rules = [
        {"name": "url", "deny": "change['after']['url'].startsWith('http:')"},
        {"name": "secret", "deny": "isSecret(change['after']['headers']['Ünï \"q\\\\'])"},
    ]
    held = change(url="http://a", headers={'Ünï "q\\': SECRET})
    assert verdicts(rules, held) == [("url", "violated"), ("secret", "violated")]
    assert verdicts(rules, change(url="https://a", headers={'Ünï "q\\': "plain"})) == []
