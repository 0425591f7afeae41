"""When a plan's reads go out: the lists do not wait for GET /context unless they
may have to name the organization, and a /context that fails is the run's error,
with the reads under way stopped (in-process service, a transport that holds the
/context answer back while the loop runs everything else that is ready)."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentform.api.client import ApiClient
from agentform.config.loader import load_workspace
from agentform.core.errors import AgentformError, ApiError
from agentform.engine.apply import apply_plan
from agentform.engine.planfile import dump_plan, load_plan, verified_plan
from agentform.engine.planner import make_plan
from agentform.service import DEMO_ADMIN_KEY
from tests.provisioner.harness import BASE_URL, Service, write_workspace

OTHER_ORG = {"id": "0b7f3c1e-0000-4000-8000-0000000000ff", "name": "elsewhere"}


class SlowContext(httpx.AsyncBaseTransport):
    """Holds the /context answer for a while of event-loop turns, and logs when each
    request went out and when /context was answered; `several` adds a second
    organization to /context, as for a key that reaches two."""

    def __init__(self, service: Service, several: bool = False) -> None:
        self.inner = httpx.ASGITransport(app=service.log)
        self.several = several
        self.events: list[str] = []
        self.created: list[dict[str, Any]] = []  # the body of every create

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path.removeprefix("/agents/v2")
        query = f"?{request.url.query.decode()}" if request.url.query else ""
        self.events.append(f"sent {path}{query}")
        if request.method == "POST" and "/members" not in path:
            self.created.append(json.loads(request.content))
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


class ContextAfterADeepRead(SlowContext):
    """/context is answered once a member read went out (or after many loop turns, if
    none comes); member reads are held until then: deep reads are under way."""

    answered: asyncio.Event | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.answered = self.answered or asyncio.Event()
        if "/members" in request.url.path:
            self.events.append(f"sent {request.url.path}")
            await self.answered.wait()
            return await self.inner.handle_async_request(request)
        if not request.url.path.endswith("/context"):
            return await super().handle_async_request(request)
        self.events.append("sent /context")
        for _ in range(10_000):
            if any("/members" in e for e in self.events):
                break
            await asyncio.sleep(0)
        response = await self.inner.handle_async_request(request)
        body = json.loads(await response.aread())
        body["organizations"].append(OTHER_ORG)
        self.events.append("answered /context")
        self.answered.set()
        return httpx.Response(response.status_code, json=body)


def test_a_failed_context_is_the_error_and_stops_the_reads(service: Service, ws: Path) -> None:
    pools = "".join(f"  - {{name: p{i}, members: [bot-1]}}\n" for i in range(20))
    service.seed_live({"profilePools": [{"name": f"p{i}"} for i in range(20)]})
    files = {"agentform.yaml": "workspace: w\n", "pools.yaml": "profilePools:\n" + pools}
    write_workspace(ws, files)
    transport = ContextAfterADeepRead(service)
    with pytest.raises(AgentformError, match="reaches 2 organizations"):
        plan_through(ws, transport)
    assert len(transport.sent_before_context()) > 1  # the lists had gone out
    members = [e for e in transport.events if "/members" in e]
    # the 20 pools' member reads had begun, and stopped: those waiting for a slot
    # never went out (a slot freed as /context failed goes to a waiting read first)
    assert 1 <= len(members) < 20, transport.events


class Unreachable(SlowContext):
    """Every request fails to connect; /context fails last (after the lists did)."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path.removeprefix("/agents/v2")
        self.events.append(f"sent {path}")
        if path == "/context":
            for _ in range(200):
                await asyncio.sleep(0)
        raise httpx.ConnectError("refused", request=request)


def test_when_everything_fails_the_context_error_is_the_one_shown_and_nothing_leaks(
    service: Service, ws: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_workspace(ws, {"agentform.yaml": "workspace: w\n", "pools.yaml": POOLS})
    transport = Unreachable(service)
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        with pytest.raises(ApiError, match="GET /context: cannot reach"):
            plan_through(ws, transport)
        gc.collect()  # an error nobody retrieved is reported when its future is freed
    assert "never retrieved" not in caplog.text, caplog.text


def test_a_saved_plan_applied_for_a_key_of_several_organizations_names_the_chosen_one(
    service: Service, ws: Path
) -> None:
    """`apply PLANFILE` reads live again (verified_plan) on a client of its own: its
    lists and creates name the organization as the plan's did."""
    org = service.run(lambda api: api.request("GET", "/context"))["organizationId"]
    settings = f"workspace: w\norganizationId: {org}\n"
    write_workspace(ws, {"agentform.yaml": settings, "pools.yaml": POOLS})
    workspace = load_workspace(ws)

    async def plan() -> str:
        async with ApiClient(BASE_URL, DEMO_ADMIN_KEY, transport=SlowContext(service, True)) as api:
            return dump_plan(await make_plan(workspace, api, "test"))

    saved = asyncio.run(plan())
    transport = SlowContext(service, several=True)

    async def apply() -> bool:
        async with ApiClient(BASE_URL, DEMO_ADMIN_KEY, transport=transport) as api:
            the_plan = await verified_plan(load_plan(saved), workspace, api, "test")
            return (await apply_plan(the_plan, api)).ok

    assert asyncio.run(apply())
    assert transport.sent_before_context() == ["sent /context"]
    lists = [e for e in transport.sent_after_context() if "?" in e and "/members" not in e]
    assert len(lists) >= 6 and all(f"organizationId={org}" in e for e in lists), lists
    assert transport.created and all(b.get("organizationId") == org for b in transport.created), (
        transport.created
    )
