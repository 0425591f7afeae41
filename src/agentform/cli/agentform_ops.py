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
from urllib.parse import urlsplit, urlunsplit

from agentform.api.client import ApiClient
from agentform.api.connect import Endpoint, connect
from agentform.cli.endpoint import LOCAL, LOCAL_BASE_URL
from agentform.core.errors import AgentformError, ApiError

API_PATH = "/agents/v2"
OWN_PATH = "/agentform/v1"


def own_url(base_url: str) -> str:
    """The URL of agentform's operations on the server of the API's `base_url`."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    if path.endswith(API_PATH):
        path = path[: -len(API_PATH)]
    return urlunsplit((parts.scheme, parts.netloc, path + OWN_PATH, "", ""))


def own_client(endpoint: Endpoint, workspace_root: Path, runtime: bool = False) -> ApiClient:
    """A client of agentform's operations of the endpoint's service (`local`: the
    service in-process, on the workspace's state file, its runtime off unless asked)."""
    if endpoint.url != LOCAL:
        return connect(Endpoint(own_url(endpoint.url), endpoint.api_key))
    from agentform.service import create_app
    from agentform.service.http.inprocess import InProcessTransport
    from agentform.service.store.database import DEFAULT_DB_PATH

    app = create_app(workspace_root / DEFAULT_DB_PATH, runtime=runtime)
    return connect(endpoint, transport=InProcessTransport(app), base_url=own_url(LOCAL_BASE_URL))


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
