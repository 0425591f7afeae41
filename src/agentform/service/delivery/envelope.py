"""Notification bodies (docs/service/contract.md#execution-notification-envelope,
#batch-notification-envelope, #webhook-integrations) and their exact bytes.

A body is built anew for every attempt (its `event_id` is new each time) from
the stored event; `timestamp` is the time of the event, the same on every
attempt. The bytes sent are the bytes signed: compact UTF-8 JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agentform.rules.webhook_events import BATCH_EVENTS, TEST_EVENT

TEST_MESSAGE = "This is a test notification from the Agent Service."


def encode(body: Any) -> bytes:
    """The bytes of a body, as sent and as signed."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def execution_url(platform_url: str, execution_id: str) -> str:
    return f"{platform_url}/executions/{execution_id}"


def batch_url(platform_url: str, agent_id: str) -> str:
    return f"{platform_url}/agents/{agent_id}/batch"


def execution_envelope(
    event: str,
    *,
    event_id: str,
    timestamp: str,
    execution_id: str,
    agent_id: str,
    agent_name: str,
    payload: Mapping[str, Any],
    metadata: Mapping[str, str] | None,
    platform_url: str,
) -> dict[str, Any]:
    """docs/service/contract.md#execution-notification-envelope: `info.metadata` only
    when the execution was given metadata."""
    info: dict[str, Any] = {
        "event": event,
        "execution_id": execution_id,
        "execution_url": "" if event == TEST_EVENT else execution_url(platform_url, execution_id),
        "agent_id": agent_id,
        "agent_name": agent_name,
    }
    if metadata:
        info["metadata"] = dict(metadata)
    info["payload"] = dict(payload)
    return {"type": "execution", "event_id": event_id, "timestamp": timestamp, "info": info}


def batch_envelope(
    event: str,
    *,
    event_id: str,
    timestamp: str,
    agent_id: str,
    agent_name: str,
    batch_id: str,
    batch_name: str,
    payload: Mapping[str, Any],
    platform_url: str,
) -> dict[str, Any]:
    """docs/service/contract.md#batch-notification-envelope, with `info.event` and
    `info.batch_url`."""
    if event not in BATCH_EVENTS:
        raise ValueError(f"{event} is not a batch event")
    return {
        "type": "execution_batch",
        "event_id": event_id,
        "timestamp": timestamp,
        "info": {
            "event": event,
            "agent_id": agent_id,
            "agent_name": agent_name,
            "batch_id": batch_id,
            "batch_name": batch_name,
            "batch_url": batch_url(platform_url, agent_id),
            "payload": dict(payload),
        },
    }


def test_envelope(*, event_id: str, timestamp: str, subject_id: str) -> dict[str, Any]:
    """EXECUTION_TEST: no execution and no agent, so `execution_url` and the agent
    fields are empty; `execution_id` is the delivery's id, stable across attempts
    so a receiver's deduplication works on tests too."""
    return execution_envelope(
        TEST_EVENT,
        event_id=event_id,
        timestamp=timestamp,
        execution_id=subject_id,
        agent_id="",
        agent_name="",
        payload={"message": TEST_MESSAGE},
        metadata=None,
        platform_url="",
    )
