"""The example receiver's own test: `pytest test_receiver.py` (needs only pytest too)."""

from __future__ import annotations

import base64
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from receiver import Receiver

PRIVATE = rsa.generate_private_key(public_exponent=65537, key_size=2048)
PUBLIC_PEM = PRIVATE.public_key().public_bytes(
    serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
)


def signed(body: bytes) -> str:
    """What the service puts in X-Service-Signature."""
    return base64.b64encode(PRIVATE.sign(body, padding.PKCS1v15(), hashes.SHA256())).decode()


def notification(event: str, event_id: str, **payload: Any) -> bytes:
    return json.dumps(
        {
            "type": "execution",
            "event_id": event_id,
            "timestamp": "2026-03-01T10:00:00.000000Z",
            "info": {
                "event": event,
                "execution_id": "6f1b7f3e-1111-4111-8111-000000000001",
                "execution_url": "https://platform.example/executions/6f1b…",
                "agent_id": "a",
                "agent_name": "checkout-agent",
                "payload": payload,
            },
        },
        separators=(",", ":"),
    ).encode()


class Handled:
    def __init__(self) -> None:
        self.items: list[Any] = []
        self.gate = threading.Event()
        self.gate.set()

    def __call__(self, item: Any) -> None:
        self.gate.wait(10)
        self.items.append(item)


@pytest.fixture
def receiver() -> Iterator[tuple[Receiver, Handled]]:
    handled = Handled()
    rx = Receiver(PUBLIC_PEM, port=0, handler=handled)
    rx.start()
    yield rx, handled
    handled.gate.set()
    rx.stop()


def post(rx: Receiver, body: bytes, signature: str | None) -> int:
    headers = {"Content-Type": "application/json"}
    if signature is not None:
        headers["X-Service-Signature"] = signature
    request = urllib.request.Request(f"http://127.0.0.1:{rx.port}/", body, headers)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_a_signed_notification_is_answered_204_and_handled(receiver: Any) -> None:
    rx, handled = receiver
    body = notification("EXECUTION_COMPLETED", "e1", result={}, reasoning="", outcome="success")
    assert post(rx, body, signed(body)) == 204
    rx.work.join()
    assert [n["info"]["event"] for n in handled.items] == ["EXECUTION_COMPLETED"]


@pytest.mark.parametrize("signature", [None, "", "bm90IGEgc2lnbmF0dXJl", "%%%"])
def test_a_missing_or_wrong_signature_is_401_and_not_handled(receiver: Any, signature: Any) -> None:
    rx, handled = receiver
    body = notification("EXECUTION_STARTED", "e1")
    assert post(rx, body, signature) == 401
    rx.work.join()
    assert handled.items == []


def test_verification_is_on_the_raw_bytes_before_parsing(receiver: Any) -> None:
    rx, handled = receiver
    body = notification("EXECUTION_STARTED", "e1")
    reformatted = json.dumps(json.loads(body), indent=2).encode()  # same JSON, other bytes
    assert post(rx, reformatted, signed(body)) == 401
    assert post(rx, b"{not json", signed(b"{not json!")) == 401  # not a parse error: a 401
    rx.work.join()
    assert handled.items == []


def test_the_answer_comes_before_the_work(receiver: Any) -> None:
    rx, handled = receiver
    handled.gate.clear()  # the handler is stuck
    body = notification("EXECUTION_STARTED", "e1")
    assert post(rx, body, signed(body)) == 204  # answered anyway
    assert handled.items == []
    handled.gate.set()
    rx.work.join()
    assert len(handled.items) == 1


def test_a_redelivery_with_a_new_event_id_is_handled_once(receiver: Any) -> None:
    rx, handled = receiver
    first = notification("EXECUTION_FAILED", "attempt-1", reason="boom")
    again = notification("EXECUTION_FAILED", "attempt-2", reason="boom")
    assert post(rx, first, signed(first)) == 204
    assert post(rx, again, signed(again)) == 204
    rx.work.join()
    assert len(handled.items) == 1


def test_events_that_repeat_in_one_execution_are_all_handled(receiver: Any) -> None:
    rx, handled = receiver
    for step in (1, 2):
        body = notification("EXECUTION_STEP_STARTED", f"e{step}", step=step)
        assert post(rx, body, signed(body)) == 204
    rx.work.join()
    assert [n["info"]["payload"]["step"] for n in handled.items] == [1, 2]


def test_an_unwrapped_result_is_handled_as_it_comes(receiver: Any) -> None:
    rx, handled = receiver
    body = b'{"order":"A-1","total":12}'
    assert post(rx, body, signed(body)) == 204
    rx.work.join()
    assert handled.items == [{"order": "A-1", "total": 12}]
