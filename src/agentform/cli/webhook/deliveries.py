"""`agentform webhook deliveries NAME` and `webhook resend`: what was sent, and sending again.

Both use the service's own delivery routes, which sit beside the API at
`<root>/agentform/v1` (the run context's `own()` client, here `own`), and the API
(`api`) to find the integration by its name. `--since` takes an ISO time with a
zone, or an age (`30m`, `2h`, `7d`) counted back from now, as `gh` and
`kubectl logs --since` do: the service's now (`GET /agentform/v1/clock`), since
the deliveries are stamped by its clock, and a manual clock (`service run --clock
manual`) stands wherever `service advance` moved it, days from this machine's.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from agentform.api.client import ApiClient
from agentform.cli.webhook.test import find_integration
from agentform.core.errors import AgentformError

DELIVERIES = "/webhook-deliveries"
AGE = re.compile(r"^(\d{1,6})([smhd])$")
UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def since_time(text: str, now: datetime | None = None, option: str = "--since") -> str:
    """An ISO time with a zone, from `text` (such a time, or an age like `2h`); an
    error names `option`, the one the user wrote."""
    age = AGE.match(text.strip())
    if age:
        moment = (now or datetime.now(UTC)).replace(microsecond=0)
        moment -= timedelta(**{UNITS[age[2]]: int(age[1])})
        return moment.isoformat().replace("+00:00", "Z")
    try:
        parsed = datetime.fromisoformat(text.strip())
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise AgentformError(
            f"{option} {text!r}: give a time with its zone (2026-01-31T09:00:00Z) or an age "
            "(30m, 2h, 7d)"
        )
    return parsed.isoformat()


async def service_since(own: ApiClient, text: str) -> str:
    """`since_time`, an age counted back from the service's clock (a call only for an age)."""
    if not AGE.match(text.strip()):
        return since_time(text)
    answer = await own.request("GET", "/clock")
    return since_time(text, datetime.fromisoformat(str(answer["now"])))


async def list_deliveries(
    api: ApiClient, own: ApiClient, name: str, status: str | None, since: str | None, limit: int
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The integration named `name`, and its newest deliveries with their attempts."""
    integration = await find_integration(api, name)
    params: dict[str, Any] = {"integrationId": integration["id"], "limit": limit}
    if status:
        params["status"] = status
    if since:
        params["since"] = await service_since(own, since)
    answer = await own.request("GET", DELIVERIES, params=params)
    return integration, list(answer["items"])


async def resend_one(own: ApiClient, delivery_id: str) -> list[str]:
    try:
        delivery_id = str(uuid.UUID(delivery_id))
    except ValueError:
        raise AgentformError(
            f"{delivery_id[:80]!r} is not a delivery id (a UUID, as `webhook deliveries` shows)"
        ) from None
    answer = await own.request("POST", f"{DELIVERIES}/{delivery_id}/resend", idempotent=False)
    return list(answer["deliveryIds"])


async def resend_failed(
    api: ApiClient, own: ApiClient, name: str | None, since: str
) -> tuple[str, list[str]]:
    """The time `since` means on the service's clock, and the new deliveries' ids."""
    body: dict[str, Any] = {"since": await service_since(own, since)}
    if name:
        body["integrationId"] = (await find_integration(api, name))["id"]
    answer = await own.request("POST", f"{DELIVERIES}/resend", json=body, idempotent=False)
    return body["since"], list(answer["deliveryIds"])
