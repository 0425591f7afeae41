"""What the command line knows of the embedded service's own operations (its clock,
its routing explanations, its deliveries), which the run context's `own()` client
reaches.

They are served beside the Agent Service API, not in it: a base URL ending in
`/agents/v2` has them at `/agentform/v1` on the same server (docs/service/
own-operations.md). The public service has none of them, so a 404 from them is
told apart: when the service does not even know `GET /agentform/v1/clock`, the
operations are missing, and the command says that plainly instead of "not found".
A 405 there says the same: the embedded service always takes `GET /clock`, so a
server refusing the method is another one.
"""

from __future__ import annotations

from typing import Any

from agentform.api.client import ApiClient
from agentform.core.errors import AgentformError, ApiError


class MissingOperations(AgentformError):
    """The service does not have agentform's own operations (the public service)."""


async def read_clock(api: ApiClient, shown: str, what: str) -> dict[str, Any]:
    """`GET /clock`, or MissingOperations saying that the service cannot do `what`."""
    try:
        answer: dict[str, Any] = await api.request("GET", "/clock")
    except ApiError as exc:
        if exc.status in (404, 405):  # no such path, or not the method the service has
            raise MissingOperations(
                f"the service at {shown} does not {what}; the embedded agentform service "
                "does (agentform service run)"
            ) from None
        raise
    return answer
