"""The webhook tools' lines, word for word (output/webhook_lines.py): what a user
reads from `webhook verify`, `listen` and `test`, and what scripts may grep."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentform.output.webhook_lines import (
    WAIT_HINT,
    delivery_line,
    forward_line,
    listening_lines,
    notification_line,
    summary,
    verify_line,
)


def test_verify_says_the_verdict_and_the_bytes_it_was_on() -> None:
    assert verify_line(True, 12, "capture.http") == (
        "verified: the signature matches the 12 bytes of capture.http"
    )
    assert verify_line(False, 12, "capture.http") == (
        "NOT verified: the signature does not match the 12 bytes of the body"
    )


def test_the_listen_banner_names_the_local_service_and_the_forward() -> None:
    url = "http://127.0.0.1:8787/"
    assert listening_lines(url, "k.pem", None, None) == [
        "Listening on http://127.0.0.1:8787/ (verifying with k.pem); Ctrl-C stops."
    ]
    db = Path("ws/.agentform/service.db")
    assert listening_lines(url, "signing key sha256:ab", db, "http://h/x")[1:] == [
        "(endpoint local: notifications come from a service on ws/.agentform/service.db, "
        "such as `agentform service run --db ws/.agentform/service.db`)",
        "Forwarding every notification to http://h/x",
    ]


EVENT = json.dumps(
    {"info": {"event": "EXECUTION_COMPLETED", "execution_id": "e-1", "agent_name": "a"}}
).encode()


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (EVENT, f"{'EXECUTION_COMPLETED':<37}  execution e-1  agent a"),
        (
            json.dumps(
                {"info": {"event": "BATCH_DONE", "batch_id": "b-1", "execution_id": "e"}}
            ).encode(),
            f"{'BATCH_DONE':<37}  batch b-1",
        ),
        (b"{}", "(unwrapped result, 2 bytes)"),
        (b"<html>", "(not JSON, 6 bytes)"),
    ],
)
def test_a_notification_is_summed_up_by_its_body(body: bytes, said: str) -> None:
    assert summary(body) == said


def test_a_notification_line_says_when_where_what_and_the_verdict() -> None:
    what = summary(EVENT)
    assert notification_line("10:00:00", "/hook", EVENT, True, True) == (
        f"10:00:00  /hook  {what}  verified"
    )
    assert notification_line("10:00:00", "/", EVENT, False, True).endswith(
        "NOT VERIFIED: bad signature"
    )
    assert notification_line("10:00:00", "/", EVENT, False, False).endswith(
        "NOT VERIFIED: no signature"
    )


def test_a_forward_says_the_handlers_status_or_its_failure() -> None:
    assert forward_line("http://h/x", 204) == "  -> http://h/x: 204"
    assert (
        forward_line("http://h/x", None, "ConnectError") == "  -> http://h/x: failed (ConnectError)"
    )


@pytest.mark.parametrize(
    ("delivery", "said"),
    [
        (
            {"status": "pending", "attempts": 0},
            "pending: the service has not made the first attempt yet",
        ),
        (
            {"status": "pending", "attempts": 1},
            "not delivered yet (1 attempt: no attempt finished yet); the service retries",
        ),
    ],
)
def test_a_test_delivery_not_settled_yet(delivery: dict[str, object], said: str) -> None:
    assert (
        delivery_line("ops", "http://h/", delivery) == f"EXECUTION_TEST to ops (http://h/): {said}"
    )
    assert WAIT_HINT.startswith("(--wait SECONDS follows the delivery")
