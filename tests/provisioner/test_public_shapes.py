"""Plan and apply against the public service's exact shapes: a transport rewrites the
embedded service's answers to what the public SDK (asteroid-odyssey 1.9.167) models,
field for field (our extra fields stripped), and the vault template list to a bare
JSON array. The plan is the same as against the embedded service's own answers."""

from __future__ import annotations

import asyncio
import functools
import json
import re
import shutil
import typing
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel

from agentform.api.client import ApiClient
from agentform.config.loader import load_workspace
from agentform.engine.apply import apply_plan
from agentform.engine.model import Plan
from agentform.engine.planner import make_plan
from agentform.service import DEMO_ADMIN_KEY
from tests.clock import InstantClock
from tests.provisioner.harness import BASE_URL, Service

QUICKSTART = Path(__file__).parents[2] / "examples" / "quickstart"

ID = r"/[0-9a-f-]{36}"
SETS = r"/(agent-profile-pools|profile-groups)"


@functools.cache
def shapes() -> list[tuple[str, str, Any]]:
    """(method, path) -> the public SDK's model of the answer; list[...] for a bare array.
    The SDK is imported here, by the tests that use it: its import takes a second of
    processor time, which every xdist worker paid at collection when it was at the top."""
    import asteroid_odyssey.models as public

    return [
        ("GET", r"/context", public.AgentsContextUserContextResponse),
        ("GET", r"/agents", public.AgentList200Response),
        ("GET", r"/(profiles|agent-profiles)", public.AgentProfilesList200Response),
        ("GET", rf"/(profiles|agent-profiles){ID}", public.AgentsProfileAgentProfile),
        ("GET", SETS, public.AgentProfilePoolsList200Response),
        ("*", rf"{SETS}({ID})?", public.AgentsProfileAgentProfilePool),
        ("GET", rf"{SETS}{ID}/members", public.AgentProfilePoolMembersList200Response),
        ("GET", r"/vault/templates", list[public.AgentsVaultVaultTemplate]),
        ("*", rf"/vault/templates({ID})?", public.AgentsVaultVaultTemplate),
    ]


def shape_of(method: str, path: str) -> Any:
    for want, pattern, shape in shapes():
        if want in (method, "*") and re.fullmatch(pattern, path):
            return shape
    return None


def only_public(shape: Any, value: Any) -> Any:
    """`value` with only what the public model `shape` has, at every depth."""
    if isinstance(shape, type) and issubclass(shape, BaseModel) and isinstance(value, dict):
        out = {}
        for name, info in shape.model_fields.items():
            key = info.alias or name
            if key in value:
                out[key] = only_public(info.annotation, value[key])
        return out
    origin, args = typing.get_origin(shape), typing.get_args(shape)
    if origin is list and isinstance(value, list):
        return [only_public(args[0], v) for v in value]
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        models = [a for a in args if a is not type(None)]
        return only_public(models[0], value) if len(models) == 1 else value
    return value


class PublicShapes(httpx.AsyncBaseTransport):
    """The embedded service, answering as the public one does."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.rewritten: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        await response.aread()
        path = request.url.path.removeprefix("/agents/v2")
        shape = shape_of(request.method, path)
        if shape is None or response.status_code >= 400 or not response.content:
            return response
        body = response.json()
        if typing.get_origin(shape) is list:
            body = body["items"]  # the public template list is a bare array, not a page
        self.rewritten.append(f"{request.method} {path}")
        return httpx.Response(
            response.status_code,
            headers={"content-type": "application/json"},
            content=json.dumps(only_public(shape, body)).encode(),
        )


def client(service: Service, public_shapes: bool) -> ApiClient:
    transport: httpx.AsyncBaseTransport = httpx.ASGITransport(app=service.log)
    if public_shapes:
        transport = PublicShapes(transport)
    return ApiClient(BASE_URL, DEMO_ADMIN_KEY, transport=transport, clock=InstantClock())


def comparable(plan: Plan) -> dict[str, Any]:
    """What a plan decides (fingerprints hash the raw answers, which differ by design)."""
    data = json.loads(plan.model_dump_json())
    return {k: data[k] for k in ("changes", "noops", "summary", "unmanaged", "organizationName")}


def test_plan_and_apply_against_public_shapes(service: Service, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    shutil.copytree(QUICKSTART, root, ignore=shutil.ignore_patterns(".agentform"))
    service.seed_live(
        {
            "profilePools": [{"name": "checkout-eu", "allowConcurrentUse": True}],
            "profileGroups": [{"name": "stray", "members": ["bot-2"]}],
            "vaultTemplates": [
                {
                    "name": "Shop login",
                    "kind": "login",
                    "fields": [{"type": "username", "label": "Username", "required": True}],
                }
            ],
        }
    )
    workspace = load_workspace(root)

    async def plan(public_shapes: bool) -> tuple[Plan, ApiClient]:
        async with client(service, public_shapes) as api:
            return await make_plan(workspace, api, "public"), api

    ours, _ = asyncio.run(plan(public_shapes=False))
    theirs, api = asyncio.run(plan(public_shapes=True))
    rewritten = api.sender.transport.rewritten  # type: ignore[attr-defined]
    assert "GET /context" in rewritten and "GET /vault/templates" in rewritten
    assert comparable(theirs) == comparable(ours)
    seeded = ("profilePools", "profileGroups", "vaultTemplates")
    others = sum(len(items) for kind, items in workspace.declared.items() if kind not in seeded)
    assert theirs.summary.create == 2 + others and theirs.summary.update == 2
    assert theirs.summary.delete == 1  # the stray group (prune)

    async def apply() -> bool:
        async with client(service, public_shapes=True) as api:
            return (await apply_plan(theirs, api, values=workspace.sensitive_values())).ok

    assert asyncio.run(apply())
    for public_shapes in (True, False):
        again, _ = asyncio.run(plan(public_shapes))
        assert not again.has_changes, again.summary
