"""`agentform webhook test NAME`: send an integration's test event, report its delivery.

The service writes EXECUTION_TEST to its outbox and answers `/test` once the first
attempt is made (docs/service/contract.md#test-deliveries: `{deliveryId, status,
responseStatus}`), so without waiting this shows the first attempt. A failed attempt is
retried (about 1 s, then 2 s later; 3 attempts in all), so `--wait SECONDS` follows the
delivery in the integration's deliveries until it has an outcome: delivered, or failed
after its last attempt.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from agentform.api.client import ApiClient
from agentform.core.errors import AgentformError
from agentform.core.problems import did_you_mean

POLL_SECONDS = 0.25


@dataclass(frozen=True)
class TestOutcome:
    name: str
    url: str
    delivery: dict[str, Any]
    health: dict[str, Any] | None = None  # the integration's, as the test's answer says

    @property
    def delivered(self) -> bool:
        return self.delivery.get("status") == "delivered"

    @property
    def settled(self) -> bool:
        """Delivered, or failed after its last attempt: nothing more will happen."""
        return self.delivery.get("status") in ("delivered", "failed")


async def find_integration(api: ApiClient, name: str) -> dict[str, Any]:
    """The organization's integration named exactly `name`, else an error with a hint."""
    matches: list[dict[str, Any]] = await api.list_all(
        "/webhook-integrations", {"searchName": name}
    )
    for item in matches:
        if item["name"] == name:
            return item
    names = [i["name"] for i in await api.list_all("/webhook-integrations")]
    raise AgentformError(f"no webhook integration named '{name}'{did_you_mean(name, names)}")


async def _delivery(api: ApiClient, integration_id: str, delivery_id: str) -> dict[str, Any]:
    """The delivery, read from the end of the integration's list (the newest are last)."""
    path = f"/webhook-integrations/{integration_id}/deliveries"
    total = (await api.request("GET", path, params={"pageSize": 1}))["total"]
    last = max(1, math.ceil(total / 100))
    for page in range(last, 0, -1):
        items: list[dict[str, Any]]
        items = (await api.request("GET", path, params={"pageSize": 100, "page": page}))["items"]
        for item in items:
            if item["id"] == delivery_id:
                return item
    raise AgentformError(f"the test delivery {delivery_id} is not in the deliveries list")


async def send_test(
    api: ApiClient,
    name: str,
    wait: float,
    pause: Callable[[float], Awaitable[None]] = asyncio.sleep,
    now: Callable[[], float] = time.monotonic,
) -> TestOutcome:
    """Sends the test event; then, for at most `wait` seconds, follows the delivery
    until it is delivered or failed. `pause` and `now` are the clock (tests: a manual one)."""
    integration = await find_integration(api, name)
    answer = await api.request("POST", f"/webhook-integrations/{integration['id']}/test")
    deadline = now() + wait
    while True:
        delivery = await _delivery(api, integration["id"], answer["deliveryId"])
        health = answer.get("integrationHealth")
        outcome = TestOutcome(integration["name"], integration["url"], delivery, health)
        left = deadline - now()
        if outcome.settled or left <= 0:
            return outcome
        await pause(min(POLL_SECONDS, left))
