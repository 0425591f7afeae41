"""`agentform webhook test NAME --wait SECONDS`: follows the test delivery through its
retries to its outcome (delivered, or failed after 3 attempts), on a manual clock."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from agentform.api.client import ApiClient
from agentform.cli.endpoint import LOCAL_BASE_URL
from agentform.cli.webhook.test import send_test
from agentform.output.webhook_lines import delivery_line
from agentform.service import DEMO_ADMIN_KEY, create_app
from agentform.service.http.inprocess import InProcessTransport
from agentform.service.runtime import ManualClock
from agentform.service.settings import ServiceSettings
from tests.webhooks.receiver import Receiver, running_receiver


def outcome_of(tmp_path: Path, rx: Receiver, wait: float) -> Any:
    """`send_test` against a service on a manual clock: its pauses move that clock."""
    clock = ManualClock()
    start = clock.now()
    # A test wait of 0: the service answers /test at once (its own wait is on the real clock).
    settings = ServiceSettings(platform_url="http://platform.test", webhook_test_wait_seconds=0)
    app = create_app(tmp_path / "service.db", clock=clock, settings=settings)

    def now() -> float:
        return (clock.now() - start).total_seconds()

    pause: Callable[[float], Awaitable[None]] = clock.advance

    async def go() -> Any:
        transport = InProcessTransport(app)
        async with ApiClient(LOCAL_BASE_URL, DEMO_ADMIN_KEY, transport=transport) as api:
            body = {"name": "ops-alerts", "url": rx.url}
            await api.request("POST", "/webhook-integrations", json=body)
            return await send_test(api, "ops-alerts", wait, pause=pause, now=now)

    return asyncio.run(go())


@pytest.mark.parametrize(
    ("answers", "wait", "shown"),
    [
        ((500, 503, 204), 10, "delivered, answered 204 (3 attempts)"),
        ((500,), 10, "failed after 3 attempts: answered 500"),
        ((500,), 2, "not delivered yet (2 attempts: answered 500); the service retries"),
    ],
)
def test_wait_follows_the_retries_to_the_outcome(
    tmp_path: Path, answers: tuple[int, ...], wait: float, shown: str
) -> None:
    with running_receiver(answers[-1]) as rx:
        rx.answer(*answers)
        outcome = outcome_of(tmp_path, rx, wait)
    line = delivery_line(outcome.name, outcome.url, outcome.delivery)
    assert line == f"EXECUTION_TEST to ops-alerts ({rx.url}): {shown}"
    assert len(rx.received) == outcome.delivery["attempts"]
