"""The webhook client's own (real-time) timeouts are the service's
`webhook_timeout_seconds`, not httpx's default of the sender's 10 s.

Before: `webhook_timeout_seconds=30` was kept by the clock's deadline, but the
client was made with 10 s, so a receiver answering after 20 s was a failed
attempt, "no answer within 10 s". The receiver here is in-process: it answers
after `ANSWER_AFTER` seconds, or times out as httpx would when the read timeout
httpx hands the transport is shorter (no real waiting).
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.service.test_delivery_fairness import SETTINGS
from tests.service.test_webhook_transport import one_delivery

ANSWER_AFTER = 20.0


def _slow_receiver(request: httpx.Request) -> httpx.Response:
    read = request.extensions["timeout"]["read"]
    if read is None or read >= ANSWER_AFTER:
        return httpx.Response(204, stream=httpx.ByteStream(b""))
    raise httpx.ReadTimeout(f"no answer within {read} s", request=request)


@pytest.mark.parametrize(
    ("setting", "status", "error"),
    [(30.0, "delivered", None), (5.0, "pending", "no answer within 5 s")],
)
def test_the_webhook_clients_timeout_is_the_services_setting(
    tmp_path: Path, setting: float, status: str, error: str | None
) -> None:
    settings = SETTINGS.model_copy(
        update={
            "webhook_transport": httpx.MockTransport(_slow_receiver),
            "webhook_timeout_seconds": setting,
        }
    )
    delivery = one_delivery(tmp_path, settings)
    assert (delivery["status"], delivery["lastError"]) == (status, error)
