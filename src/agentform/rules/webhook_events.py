"""Webhook events (docs/service/contract.md#events-and-payloads), written once for
the service and the provisioner: the event names, which of them an attachment may
name, and the fields of each event's payload.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agentform.core.problems import did_you_mean

EXECUTION_EVENTS: tuple[str, ...] = (
    "EXECUTION_STARTED",
    "EXECUTION_COMPLETED",
    "EXECUTION_FAILED",
    "EXECUTION_CANCELLED",
    "EXECUTION_PAUSED",
    "EXECUTION_RESUMED",
    "EXECUTION_AWAITING_CONFIRMATION",
    "EXECUTION_ACTION_STARTED",
    "EXECUTION_ACTION_COMPLETED",
    "EXECUTION_ACTION_FAILED",
    "EXECUTION_STEP_STARTED",
    "EXECUTION_STEP_PROCESSED",
    "EXECUTION_MESSAGE_ADDED",
    "EXECUTION_REASONING_ADDED",
    "EXECUTION_FILE_ADDED",
    "EXECUTION_PLAYWRIGHT_SCRIPT_GENERATED",
    "EXECUTION_TRANSITIONED",
    "EXECUTION_WORKFLOW_UPDATED",
    "USER_MESSAGE_RECEIVED",
)
"""The events an execution emits, in the contract's order
(docs/service/contract.md#events-and-payloads)."""

BATCH_EVENTS: tuple[str, ...] = ("BATCH_STARTED", "BATCH_COMPLETED")
TEST_EVENT = "EXECUTION_TEST"
"""Sent only by `POST /webhook-integrations/{id}/test`; never attached."""

EVENT_NAMES: tuple[str, ...] = (*EXECUTION_EVENTS, *BATCH_EVENTS, TEST_EVENT)
ATTACHABLE_EVENTS: tuple[str, ...] = (*EXECUTION_EVENTS, *BATCH_EVENTS)
ALL_EVENTS = "*"
"""`eventRules: ["*"]`: every attachable event."""

COMPLETED_EVENT = "EXECUTION_COMPLETED"
"""The one event `unwrapResult` changes: its body is `payload.result` alone."""


@dataclass(frozen=True)
class PayloadFields:
    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()


EVENT_PAYLOAD_FIELDS: Mapping[str, PayloadFields] = {
    "EXECUTION_STARTED": PayloadFields(),
    "EXECUTION_COMPLETED": PayloadFields(("result", "reasoning", "outcome")),
    "EXECUTION_FAILED": PayloadFields(("reason",)),
    "EXECUTION_CANCELLED": PayloadFields(("reason", "cancelled_by")),
    "EXECUTION_PAUSED": PayloadFields(("reason", "paused_by")),
    "EXECUTION_RESUMED": PayloadFields(("reason",)),
    "EXECUTION_AWAITING_CONFIRMATION": PayloadFields(("reason",)),
    "EXECUTION_ACTION_STARTED": PayloadFields(
        ("action_id", "action_name", "arguments", "step_number")
    ),
    "EXECUTION_ACTION_COMPLETED": PayloadFields(
        ("action_id", "action_name", "output", "step_number"), ("duration",)
    ),
    "EXECUTION_ACTION_FAILED": PayloadFields(
        ("action_id", "action_name", "failure", "step_number"), ("duration", "os_error")
    ),
    "EXECUTION_STEP_STARTED": PayloadFields(("step",)),
    "EXECUTION_STEP_PROCESSED": PayloadFields(("step",)),
    "EXECUTION_MESSAGE_ADDED": PayloadFields(("message",)),
    "EXECUTION_REASONING_ADDED": PayloadFields(("reasoning",)),
    "EXECUTION_FILE_ADDED": PayloadFields(
        ("file_id", "file_name", "mime_type", "file_size", "source", "presigned_url")
    ),
    "EXECUTION_PLAYWRIGHT_SCRIPT_GENERATED": PayloadFields(
        ("node_id", "node_name", "script", "context", "generated_at")
    ),
    "EXECUTION_TRANSITIONED": PayloadFields(
        ("to_node",), ("from_node_duration", "transition_type")
    ),
    "EXECUTION_WORKFLOW_UPDATED": PayloadFields(("workflow_update",)),
    "USER_MESSAGE_RECEIVED": PayloadFields(
        ("user_id", "message", "execution_was", "injected_into")
    ),
    # The contract adds item_count to BATCH_COMPLETED
    # (docs/service/contract.md#events-and-payloads).
    "BATCH_STARTED": PayloadFields(("batch_id", "batch_name", "item_count")),
    "BATCH_COMPLETED": PayloadFields(
        ("batch_id", "batch_name", "item_count", "triggered_count", "cancelled_count")
    ),
    TEST_EVENT: PayloadFields(("message",)),
}
"""The payload fields of each event (docs/service/contract.md#events-and-payloads):
exactly these, no others."""


def event_rule_problem(name: str) -> str | None:
    """Why `name` cannot be an entry of `eventRules`, or None."""
    if name == ALL_EVENTS or name in ATTACHABLE_EVENTS:
        return None
    if name == TEST_EVENT:
        return f"{TEST_EVENT} is sent only by the integration's test and cannot be attached"
    return f"unknown event '{name}'{did_you_mean(name.upper(), ATTACHABLE_EVENTS)}"
