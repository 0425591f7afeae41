"""`expect: {deliveries: [...]}`: what each webhook was notified of and received.

Two sources, each for what it knows: the service's delivery records (`GET
/webhook-integrations/{id}/deliveries`: which events were notified, each one's
status and attempts) and the in-process receivers (the exact bytes and headers
of every attempt, so bodies, headers and signatures are checked as a receiver
would). `events` compares the events notified (as a set: order between
executions is not part of the contract); `status` and `attempts` hold for every
delivery selected; `body` is a subset match of at least one request received;
`headers` and `signature` hold for every request received. An unwrapped
EXECUTION_COMPLETED body is the execution's result alone: it is attributed to
the execution whose result it is.

A failed expectation says why, per event of the execution and per attachment:
the explanation comes from `explain.py`.
"""

from __future__ import annotations

from typing import Any

from agentform.rules.signatures import SIGNATURE_HEADER, verify
from agentform.rules.webhook_attachments import json_equal
from agentform.rules.webhook_events import COMPLETED_EVENT, TEST_EVENT
from agentform.testing.expectations import subset_differences
from agentform.testing.explain import why_lines
from agentform.testing.model import DeliveryExpect
from agentform.testing.receivers import Received
from agentform.testing.results import StepFailed
from agentform.testing.steps import Context


async def expect_deliveries(ctx: Context, wanted: list[DeliveryExpect]) -> None:
    problems: list[str] = []
    for expectation in wanted:
        found = await _check(ctx, expectation)
        if found:
            problems += found
            if expectation.execution is not None:
                execution = ctx.execution(expectation.execution)
                problems += await why_lines(ctx, execution, expectation.webhook)
    if problems:
        raise StepFailed("\n".join(problems))


def _subject(e: DeliveryExpect) -> str:
    parts = [f"webhook {e.webhook}"]
    if e.execution:
        parts.append(f"execution {e.execution}")
    if e.event:
        parts.append(e.event)
    return ", ".join(parts)


async def _check(ctx: Context, e: DeliveryExpect) -> list[str]:
    records = await _records(ctx, e)
    received = await _received(ctx, e)
    subject = _subject(e)
    out = []
    if e.events is not None:
        notified = list(dict.fromkeys(str(r["event"]) for r in records))
        if set(notified) != set(e.events):
            shown = ", ".join(notified) or "nothing"
            out.append(f"{subject}: expected events [{', '.join(e.events)}], notified {shown}")
    out += _statuses(subject, e, records)
    out += _bodies(subject, e, received)
    out += await _headers_and_signature(ctx, subject, e, received)
    return out


async def _records(ctx: Context, e: DeliveryExpect) -> list[dict[str, Any]]:
    """The service's deliveries to the webhook, of the execution and event when named."""
    webhook = await ctx.id_of("/webhook-integrations", e.webhook)
    rows = await ctx.service.api.list_all(f"/webhook-integrations/{webhook}/deliveries")
    execution = ctx.execution(e.execution) if e.execution else None
    return [
        r
        for r in rows
        if r["event"] != TEST_EVENT
        and (execution is None or r.get("executionId") == execution)
        and (e.event is None or r["event"] == e.event)
    ]


def _statuses(subject: str, e: DeliveryExpect, records: list[dict[str, Any]]) -> list[str]:
    if e.status is None and e.attempts is None:
        return []
    if not records:
        return [f"{subject}: no delivery was made"]
    out = []
    for r in records:
        if e.status is not None and r["status"] != e.status:
            out.append(f"{subject}: {r['event']} is {r['status']}, expected {e.status}{_last(r)}")
        if e.attempts is not None and r["attempts"] != e.attempts:
            out.append(
                f"{subject}: {r['event']} took {r['attempts']} attempts, expected {e.attempts}"
            )
    return out


def _last(record: dict[str, Any]) -> str:
    if record.get("lastError"):
        return f" (after {record['attempts']} attempts; last: {record['lastError']})"
    return f" (after {record['attempts']} attempts)"


async def _received(ctx: Context, e: DeliveryExpect) -> list[Received]:
    """The requests the webhook's receiver got, of the execution and event when named."""
    execution = ctx.execution(e.execution) if e.execution else None
    result: Any = None
    if execution is not None:
        result = (await ctx.service.api.request("GET", f"/executions/{execution}")).get("result")
    out = []
    for r in ctx.service.receivers.of(e.webhook):
        envelope = r.envelope
        if envelope is not None:
            info = envelope["info"]
            if execution is not None and info.get("execution_id") != execution:
                continue
            if e.event is not None and info.get("event") != e.event:
                continue
        else:  # an unwrapped EXECUTION_COMPLETED: its execution's result alone
            if e.event not in (None, COMPLETED_EVENT):
                continue
            if execution is not None and not json_equal(r.json, result):
                continue
        out.append(r)
    return out


def _bodies(subject: str, e: DeliveryExpect, received: list[Received]) -> list[str]:
    out = []
    if e.unwrapped is not None:
        unwrapped = [r for r in received if r.envelope is None]
        if e.unwrapped and not unwrapped:
            out.append(f"{subject}: no unwrapped {COMPLETED_EVENT} body was received")
        if not e.unwrapped and unwrapped:
            out.append(
                f"{subject}: {len(unwrapped)} unwrapped body received, expected envelopes only"
            )
    if e.body is not None:
        if not received:
            return [*out, f"{subject}: nothing was received, expected a body holding {e.body}"]
        tried = [subset_differences(e.body, r.json) for r in received]
        if all(tried):
            closest = min(tried, key=len)
            out.append(
                f"{subject}: none of the {len(received)} bodies received holds the expected body; "
                f"the closest: {'; '.join(closest[:5])}"
            )
    return out


async def _headers_and_signature(
    ctx: Context, subject: str, e: DeliveryExpect, received: list[Received]
) -> list[str]:
    out = []
    if (e.headers is not None or e.signature is not None) and not received:
        return [f"{subject}: nothing was received"]
    wanted: dict[str, str | None] = (
        dict.fromkeys(e.headers) if isinstance(e.headers, list) else dict(e.headers or {})
    )
    total = len(received)
    for name, value in wanted.items():
        # a value may be a secret: compared, never shown
        missing = sum(name.lower() not in r.headers for r in received)
        differ = sum(
            value is not None and r.headers.get(name.lower()) not in (None, value) for r in received
        )
        if missing:
            out.append(f"{subject}: header {name} is missing from {missing} of {total} requests")
        if differ:
            out.append(
                f"{subject}: header {name} has another value (not shown) in {differ} of "
                f"{total} requests"
            )
    if e.signature is not None:
        key = await ctx.service.api.request("GET", "/webhook-signing-key")
        bad = sum(
            not verify(r.body, r.headers.get(SIGNATURE_HEADER.lower()), key["publicKeyPem"])
            for r in received
        )
        if bad:
            out.append(f"{subject}: {bad} of {len(received)} requests have no valid signature")
    return out
