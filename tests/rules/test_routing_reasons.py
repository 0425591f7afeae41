"""What decides whether a notification goes to an attachment, in words
(`AttachmentSettings.decide`): the first rule that refuses it, else the rules that
let it through. `wants` is the same decision."""

from __future__ import annotations

from typing import Any

import pytest

from agentform.rules.webhook_attachments import AttachmentSettings, Routing

SETTINGS = AttachmentSettings.model_validate(
    {
        "eventRules": ["EXECUTION_COMPLETED", "EXECUTION_FAILED"],
        "metadataFilter": {"team": "payments"},
        "fieldFilters": [
            {"event": "EXECUTION_FAILED", "path": "reason", "op": "exists"},
            {"event": "EXECUTION_COMPLETED", "path": "outcome", "op": "ne", "value": "success"},
        ],
    }
)
PAYMENTS = {"team": "payments"}


@pytest.mark.parametrize(
    ("event", "payload", "metadata", "routing"),
    [
        (
            "EXECUTION_STARTED",
            {},
            PAYMENTS,
            Routing(
                False,
                "eventRules",
                "the event rules (EXECUTION_COMPLETED, EXECUTION_FAILED) do not list "
                "EXECUTION_STARTED",
            ),
        ),
        (
            "EXECUTION_COMPLETED",
            {"outcome": "partial"},
            {"team": "ops"},
            Routing(
                False,
                "metadataFilter.team",
                "metadataFilter.team wanted 'payments', the execution's was 'ops'",
            ),
        ),
        (
            "EXECUTION_COMPLETED",
            {"outcome": "partial"},
            None,
            Routing(
                False,
                "metadataFilter.team",
                "metadataFilter.team wanted 'payments', the execution's metadata has no 'team'",
            ),
        ),
        (
            "EXECUTION_COMPLETED",
            {"outcome": "success"},
            PAYMENTS,
            Routing(
                False,
                "fieldFilters[1]",
                'fieldFilters[1] `outcome ne "success"` was false (outcome is "success")',
            ),
        ),
        (
            "EXECUTION_FAILED",
            {},
            PAYMENTS,
            Routing(
                False,
                "fieldFilters[0]",
                "fieldFilters[0] `reason exists` was false (reason is absent)",
            ),
        ),
        (
            "EXECUTION_COMPLETED",
            {"outcome": "partial"},
            PAYMENTS,
            Routing(
                True,
                "eventRules",
                "the event rules list EXECUTION_COMPLETED, the metadata filter matched, "
                "fieldFilters[1] matched",
            ),
        ),
    ],
)
def test_the_rule_that_decided_and_why(
    event: str, payload: dict[str, Any], metadata: dict[str, str] | None, routing: Routing
) -> None:
    assert SETTINGS.decide(event, payload, metadata) == routing
    assert SETTINGS.wants(event, payload, metadata) is routing.wanted


def test_every_event_and_long_values_are_cut() -> None:
    everything = AttachmentSettings.model_validate(
        {
            "eventRules": ["*"],
            "fieldFilters": [{"event": "EXECUTION_COMPLETED", "path": "x", "op": "eq", "value": 1}],
        }
    )
    assert everything.decide("EXECUTION_STARTED", {}, None) == Routing(
        True, "eventRules", "the event rules are '*'"
    )
    refused = everything.decide("EXECUTION_COMPLETED", {"x": "y" * 500}, None)
    assert refused.reason.endswith('(x is "' + "y" * 78 + "…)")
    assert not everything.decide("EXECUTION_TEST", {}, None).wanted
