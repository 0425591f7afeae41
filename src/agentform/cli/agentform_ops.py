"""Reaching the embedded service's own operations (its clock, its routing
explanations) from the command line.

They are served beside the Agent Service API, not in it: a base URL ending in
`/agents/v2` has them at `/agentform/v1` on the same server (docs/service/
own-operations.md). The public service has none of them, so a 404 from them is
told apart: when the service does not even know `GET /agentform/v1/clock`, the
operations are missing, and the command says that plainly instead of "not found".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentform.api.client import ApiClient
from agentform.api.connect import Endpoint
from agentform.cli.endpoint import open_client
from agentform.core.errors import AgentformError, ApiError


def own_client(
    endpoint: Endpoint, workspace_root: Path, runtime: bool = False, **settings: Any
) -> ApiClient:
    """A client of agentform's operations of the endpoint's service (`local`: the
    service in-process, on the workspace's state file, its runtime off unless asked),
    paced and timed as the run's client (`settings`: Options.client_settings())."""
    return open_client(endpoint, workspace_root, run_due_work=runtime, own=True, **settings)


class MissingOperations(AgentformError):
    """The service does not have agentform's own operations (the public service)."""


async def read_clock(api: ApiClient, shown: str, what: str) -> dict[str, Any]:
    """`GET /clock`, or MissingOperations saying that the service cannot do `what`."""
    try:
        answer: dict[str, Any] = await api.request("GET", "/clock")
    except ApiError as exc:
        if exc.status == 404:
            raise MissingOperations(
                f"the service at {shown} does not {what}; the embedded agentform service "
                "does (agentform service run)"
            ) from None
        raise
    return answer
