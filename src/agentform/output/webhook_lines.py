"""The lines the webhook tools print (`agentform webhook verify|listen|test`).

One line per verdict, notification, forward and test delivery; the commands in
cli/webhook/ decide when to print them. A notification is summed up by what its
body says (event, execution or batch, agent), never by its headers: an
integration's header values are secrets.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentform.core.words import counted

WAIT_HINT = "(--wait SECONDS follows the delivery through its retries to the outcome)"


def verify_line(ok: bool, size: int, name: str) -> str:
    """`webhook verify`'s verdict on `size` bytes read from `name`."""
    if ok:
        return f"verified: the signature matches the {size} bytes of {name}"
    return f"NOT verified: the signature does not match the {size} bytes of the body"


def listening_lines(
    url: str, source: str, local_db: Path | None, forward_to: str | None
) -> list[str]:
    """`webhook listen`'s banner: where it listens, what it verifies with, where a
    local service's notifications come from, and where they are forwarded."""
    lines = [f"Listening on {url} (verifying with {source}); Ctrl-C stops."]
    if local_db is not None:
        lines.append(
            f"(endpoint local: notifications come from a service on {local_db}, such as "
            f"`agentform service run --db {local_db}`)"
        )
    if forward_to:
        lines.append(f"Forwarding every notification to {forward_to}")
    return lines


def notification_line(clock: str, path: str, body: bytes, verified: bool, signed: bool) -> str:
    """One received notification: when, on which path, what, and the verdict."""
    if verified:
        verdict = "verified"
    else:
        verdict = "NOT VERIFIED: " + ("bad signature" if signed else "no signature")
    return f"{clock}  {path}  {summary(body)}  {verdict}"


def summary(body: bytes) -> str:
    """The notification in a few words: event, execution or batch, agent."""
    try:
        data = json.loads(body)
    except ValueError:
        return f"(not JSON, {len(body)} bytes)"
    info = data.get("info") if isinstance(data, dict) else None
    if not isinstance(info, dict):
        return f"(unwrapped result, {len(body)} bytes)"
    parts = [str(info.get("event", "?")).ljust(37)]
    if info.get("batch_id"):
        parts.append(f"batch {info['batch_id']}")
    elif info.get("execution_id"):
        parts.append(f"execution {info['execution_id']}")
    if info.get("agent_name"):
        parts.append(f"agent {info['agent_name']}")
    return "  ".join(parts)


def forward_line(forward_to: str, status: int | None, failure: str | None = None) -> str:
    """A forward's outcome: the handler's status, or the failure (an httpx error's name)."""
    outcome = f"failed ({failure})" if failure is not None else str(status)
    return f"  -> {forward_to}: {outcome}"


def delivery_line(name: str, url: str, delivery: dict[str, Any]) -> str:
    """`webhook test`'s outcome: the test event's delivery to the integration `name`."""
    attempts = delivery.get("attempts", 0)
    tries = counted(attempts, "attempt")
    head = f"EXECUTION_TEST to {name} ({url}): "
    if delivery.get("status") == "delivered":
        return head + f"delivered, answered {delivery.get('lastResponseStatus')} ({tries})"
    why = delivery.get("lastError") or "no attempt finished yet"
    if delivery.get("status") == "failed":
        return head + f"failed after {tries}: {why}"
    if attempts == 0:
        return head + "pending: the service has not made the first attempt yet"
    return head + f"not delivered yet ({tries}: {why}); the service retries"
