"""Notification bodies (docs/service/contract.md#execution-notification-envelope,
#batch-notification-envelope) and one signed attempt against a loopback receiver."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import pytest

from agentform.rules.signatures import generate_key_pair, sign, verify
from agentform.service.clock import ManualClock
from agentform.service.delivery import envelope, sender
from tests.webhooks.receiver import HANG, running_receiver

KEYS = generate_key_pair()
PLATFORM = "http://127.0.0.1:8700/agents/v2"


def test_execution_envelope_has_the_fields_of_seed_6_2() -> None:
    body = envelope.execution_envelope(
        "EXECUTION_COMPLETED",
        event_id="ev-1",
        timestamp="2026-01-01T00:00:00.000000Z",
        execution_id="ex-1",
        agent_id="ag-1",
        agent_name="checkout-agent",
        payload={"result": {"ok": True}, "reasoning": "r", "outcome": "success"},
        metadata={"team": "payments"},
        platform_url=PLATFORM,
    )
    assert body == {
        "type": "execution",
        "event_id": "ev-1",
        "timestamp": "2026-01-01T00:00:00.000000Z",
        "info": {
            "event": "EXECUTION_COMPLETED",
            "execution_id": "ex-1",
            "execution_url": f"{PLATFORM}/executions/ex-1",
            "agent_id": "ag-1",
            "agent_name": "checkout-agent",
            "metadata": {"team": "payments"},
            "payload": {"result": {"ok": True}, "reasoning": "r", "outcome": "success"},
        },
    }


def test_metadata_is_left_out_when_none_was_given() -> None:
    body = envelope.execution_envelope(
        "EXECUTION_STARTED",
        event_id="e",
        timestamp="t",
        execution_id="x",
        agent_id="a",
        agent_name="n",
        payload={},
        metadata={},
        platform_url=PLATFORM,
    )
    assert "metadata" not in body["info"]


def test_batch_envelope_of_seed_6_4() -> None:
    body = envelope.batch_envelope(
        "BATCH_STARTED",
        event_id="e",
        timestamp="t",
        agent_id="ag",
        agent_name="n",
        batch_id="b",
        batch_name="nightly",
        payload={"batch_id": "b", "batch_name": "nightly", "item_count": 3},
        platform_url=PLATFORM,
    )
    assert body["type"] == "execution_batch"
    assert body["info"]["batch_url"] == f"{PLATFORM}/agents/ag/batch"
    assert body["info"]["event"] == "BATCH_STARTED"
    assert body["info"]["payload"]["item_count"] == 3
    with pytest.raises(ValueError):
        envelope.batch_envelope(
            "EXECUTION_STARTED",
            **{
                k: "x"
                for k in (
                    "event_id",
                    "timestamp",
                    "agent_id",
                    "agent_name",
                    "batch_id",
                    "batch_name",
                    "platform_url",
                )
            },
            payload={},
        )


def test_test_envelope_has_an_empty_execution_url() -> None:
    body = envelope.test_envelope(event_id="e", timestamp="t", subject_id="d-1")
    assert body["info"]["event"] == "EXECUTION_TEST"
    assert body["info"]["execution_url"] == ""
    assert body["info"]["execution_id"] == "d-1"
    assert set(body["info"]["payload"]) == {"message"}


def test_encode_is_compact_utf8() -> None:
    assert envelope.encode({"a": "é", "b": [1]}) == '{"a":"é","b":[1]}'.encode()


def attempt(url: str, **kw: object) -> sender.Attempt:
    body = envelope.encode({"hello": "wörld"})
    headers = sender.request_headers(
        {"Authorization": "Bearer s3cret"}, sign(body, KEYS.private_pem)
    )

    async def go() -> sender.Attempt:
        async with sender.new_http_client(**kw) as client:  # type: ignore[arg-type]
            return await sender.post(client, url, body, headers)

    return asyncio.run(go())


def test_a_2xx_answer_is_success_and_the_request_verifies() -> None:
    with running_receiver(204) as rx:
        assert attempt(rx.url) == sender.Attempt(True, 204)
        [got] = rx.received
    assert got.headers["Authorization"] == "Bearer s3cret"
    assert got.headers["Content-Type"] == "application/json"
    assert verify(got.body, got.headers["X-Service-Signature"], KEYS.public_pem)
    assert json.loads(got.body) == {"hello": "wörld"}


def test_custom_headers_cannot_replace_the_services_own() -> None:
    headers = sender.request_headers({"content-type": "text/plain"}, "sig")
    assert headers["Content-Type"] == "application/json"
    assert "content-type" in headers  # refused at the API; here only the order matters


def test_a_non_2xx_answer_is_a_failed_attempt() -> None:
    with running_receiver(500) as rx:
        assert attempt(rx.url) == sender.Attempt(False, 500, "answered 500")


def test_redirects_are_not_followed() -> None:
    with running_receiver(307) as rx:
        result = attempt(rx.url)
        assert not result.ok and result.status == 307
        assert "not followed" in (result.error or "")
        assert [r.path for r in rx.received] == ["/hook"]


def test_a_refused_connection_is_a_failed_attempt() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = attempt(f"http://127.0.0.1:{port}/hook")
    assert not result.ok and result.status is None
    assert result.error == "could not deliver (ConnectError)"


def test_the_clocks_deadline_ends_a_hanging_attempt() -> None:
    async def go(url: str) -> sender.Attempt:
        clock = ManualClock()
        async with sender.new_http_client() as client:
            task = asyncio.ensure_future(
                sender.post(client, url, b"{}", {}, lambda: clock.deadline(10), timeout=10)
            )
            await clock.advance(9.5)
            await asyncio.sleep(0.05)
            assert not task.done()  # the receiver has not answered, and it is not time yet
            await clock.advance(0.5)  # the clock reaches the timeout
            return await asyncio.wait_for(task, 5)

    with running_receiver() as rx:
        rx.answer(HANG)
        assert asyncio.run(go(rx.url)) == sender.Attempt(False, None, "no answer within 10 s")


def test_a_deadline_left_before_it_is_reached_does_nothing_when_reached() -> None:
    errors: list[dict[str, Any]] = []

    async def go() -> str:
        # A callback's exception does not reach the test: the loop's handler gets it.
        asyncio.get_running_loop().set_exception_handler(lambda _, ctx: errors.append(ctx))
        clock = ManualClock()
        async with clock.deadline(1):
            pass
        async with clock.deadline(5):
            await clock.advance(2)  # the first deadline passes; this block is not hurt
            await asyncio.sleep(0)
            return "finished"

    assert asyncio.run(go()) == "finished"
    assert errors == []  # nothing tried to cancel a block already left


def test_without_a_deadline_the_http_timeout_ends_a_hanging_attempt() -> None:
    with running_receiver() as rx:
        rx.answer(HANG)
        result = attempt(rx.url, timeout=0.2)
    assert result == sender.Attempt(False, None, "no answer within 0.2 s")
