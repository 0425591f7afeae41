"""`agentform webhook explain EXECUTION_ID`: why each event of an execution went, or
did not go, to each webhook integration attached to its agent.

The embedded service records each decision as its outbox makes it and answers them
at `GET /agentform/v1/executions/{id}/routing`; the public service has no such
operation, which this says in so many words (exit 1).
"""

from __future__ import annotations

from typing import Any

from agentform.api.client import ApiClient
from agentform.cli.agentform_ops import read_clock
from agentform.core.errors import AgentformError, ApiError

CANNOT = "explain routing"
MAX_ID = 200


async def explain(api: ApiClient, execution_id: str, shown: str) -> dict[str, Any]:
    """The service's explanation of the execution's routing."""
    if not execution_id.strip() or len(execution_id) > MAX_ID or "/" in execution_id:
        raise AgentformError(f"{execution_id[:MAX_ID]!r} is not an execution id")
    try:
        answer: dict[str, Any] = await api.request("GET", f"/executions/{execution_id}/routing")
    except ApiError as exc:
        if exc.status != 404:
            raise
        await read_clock(api, shown, CANNOT)  # raises when the operations are missing
        raise AgentformError(
            f"no execution {execution_id} in the organization of this API key"
        ) from None
    return answer
