"""When a plan's reads go out: the lists do not wait for GET /context unless they
may have to name the organization, and a /context that fails is the run's error,
with the reads under way stopped (in-process service, a transport that holds the
/context answer back while the loop runs everything else that is ready)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from agentform.api.client import ApiClient
from agentform.config.loader import load_workspace
from agentform.engine.planner import make_plan
from agentform.errors import AgentformError
from agentform.service import DEMO_ADMIN_KEY

from .harness import BASE_URL, Service, write_workspace

OTHER_ORG = {"id": "0b7f3c1e-0000-4000-8000-0000000000ff", "name": "elsewhere"}


class SlowContext(httpx.AsyncBaseTransport):
    """Holds the /context answer for a while of event-loop turns, and logs when each
    request went out and when /context was answered; `several` adds a second
    organization to /context, as for a key that reaches two."""

    def __init__(self, service: Service, several: bool = False) -> None:
        self.inner = httpx.ASGITransport(app=service.log)
        self.several = several
        self.events: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path.removeprefix("/agents/v2")
        query = f"?{request.url.query.decode()}" if request.url.query else ""
        self.events.append(f"sent {path}{query}")
        if path != "/context":
            return await self.inner.handle_async_request(request)
        for _ in range(50):
            await asyncio.sleep(0)
        response = await self.inner.handle_async_request(request)
        body = json.loads(await response.aread())
        if self.several:
            body["organizations"].append(OTHER_ORG)
        self.events.append("answered /context")
        return httpx.Response(response.status_code, json=body)

    def sent_before_context(self) -> list[str]:
        return self.events[: self.events.index("answered /context")]

    def sent_after_context(self) -> list[str]:
        return self.events[self.events.index("answered /context") + 1 :]


def plan_through(root: Path, transport: SlowContext) -> None:
    workspace = load_workspace(root)

    async def go() -> None:
        async with ApiClient(BASE_URL, DEMO_ADMIN_KEY, transport=transport) as api:
            await make_plan(workspace, api, "test")

    asyncio.run(go())


POOLS = "profilePools:\n  - {name: p, members: [bot-1]}\n"


def test_lists_go_out_with_context_when_no_organization_is_chosen(
    service: Service, ws: Path
) -> None:
    write_workspace(ws, {"agentform.yaml": "workspace: w\n", "pools.yaml": POOLS})
    transport = SlowContext(service)
    plan_through(ws, transport)
    early = [e.split("?")[0] for e in transport.sent_before_context()]
    assert "sent /agent-profile-pools" in early and "sent /profile-groups" in early


def test_lists_wait_for_context_and_name_the_organization_chosen(
    service: Service, ws: Path
) -> None:
    org = service.run(lambda api: api.request("GET", "/context"))["organizationId"]
    settings = f"workspace: w\norganizationId: {org}\n"
    write_workspace(ws, {"agentform.yaml": settings, "pools.yaml": POOLS})
    transport = SlowContext(service, several=True)
    plan_through(ws, transport)
    assert transport.sent_before_context() == ["sent /context"]
    lists = [e for e in transport.sent_after_context() if "/members" not in e]
    assert len(lists) >= 6 and all(f"organizationId={org}" in e for e in lists), lists


def test_a_failed_context_is_the_error_and_stops_the_reads(service: Service, ws: Path) -> None:
    write_workspace(ws, {"agentform.yaml": "workspace: w\n", "pools.yaml": POOLS})
    transport = SlowContext(service, several=True)
    with pytest.raises(AgentformError, match="reaches 2 organizations"):
        plan_through(ws, transport)
    assert len(transport.sent_before_context()) > 1  # the lists had gone out
    assert transport.sent_after_context() == []  # nothing more: no deep read began
