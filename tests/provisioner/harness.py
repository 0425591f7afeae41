"""Test harness: the embedded service in-process, with a log of every request it
receives, and helpers to build workspaces, fill live state, plan and apply."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
from starlette.types import ASGIApp, Receive, Scope, Send

from agentform.api.client import ApiClient
from agentform.api.retries import RetryPolicy
from agentform.config.loader import Workspace, load_workspace
from agentform.engine.apply import ApplyReport, apply_plan
from agentform.engine.model import Plan
from agentform.engine.planner import make_plan
from agentform.kinds import Kind
from agentform.kinds.context import PlanOptions
from agentform.service import DEMO_ADMIN_KEY, create_app

T = TypeVar("T")
BASE_URL = "http://svc/agents/v2"


@dataclass
class RequestLog:
    """An ASGI wrapper recording (method, path) of every request the service receives."""

    app: ASGIApp
    calls: list[tuple[str, str]] = field(default_factory=list)
    fail: Callable[[str, str], int | None] = lambda method, path: None
    # the service handles the request, but its answer is lost and a 502 arrives instead
    lose_answer: Callable[[str, str], bool] = lambda method, path: False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            method, path = scope["method"], scope["path"].removeprefix("/agents/v2")
            self.calls.append((method, path))
            status = self.fail(method, path)
            if self.lose_answer(method, path):

                async def drop(message: Any) -> None:
                    return None

                await self.app(scope, receive, drop)
                status = 502
            if status:
                body = json.dumps({"code": status, "message": "injected failure"}).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": status,
                        "headers": [(b"content-type", b"application/json")],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)

    def writes(self) -> list[tuple[str, str]]:
        return [c for c in self.calls if c[0] != "GET"]

    def reset(self) -> None:
        self.calls.clear()


async def _no_sleep(_: float) -> None:
    return None


class Service:
    def __init__(self, db: Path) -> None:
        self.app = create_app(db)
        self.log = RequestLog(self.app)

    def close(self) -> None:
        """Closes the service's database: its connections (two descriptors each, one a
        thread) were left open, and a test process held more than 1,024 of them."""
        self.app.state.db.close()

    def client(self, **kw: Any) -> ApiClient:
        return ApiClient(
            BASE_URL,
            DEMO_ADMIN_KEY,
            transport=httpx.ASGITransport(app=self.log),
            retry=RetryPolicy(attempts=3),
            sleep=_no_sleep,
            **kw,
        )

    def run(self, fn: Callable[[ApiClient], Awaitable[T]]) -> T:
        async def go() -> T:
            async with self.client() as api:
                return await fn(api)

        return asyncio.run(go())

    def plan(self, root: Path, options: PlanOptions | None = None, **load: Any) -> Plan:
        workspace = load_workspace(root, **load)
        return self.run(lambda api: make_plan(workspace, api, "test", options))

    def apply(
        self,
        root: Path,
        plan: Plan | None = None,
        options: PlanOptions | None = None,
        **load: Any,
    ) -> ApplyReport:
        workspace = load_workspace(root, **load)

        async def go(api: ApiClient) -> ApplyReport:
            the_plan = plan or await make_plan(workspace, api, "test", options)
            return await apply_plan(the_plan, api, values=workspace.sensitive_values())

        return self.run(go)

    def seed_live(self, live: dict[str, list[dict[str, Any]]]) -> None:
        """Creates live objects described as in the workspace format, straight through
        the API (names for ids: members, agents, pools; a webhook's attachments)."""

        async def go(api: ApiClient) -> None:
            names = {
                path: {i["name"]: i["id"] for i in await api.list_all(path)}
                for path in ("/profiles", "/agents")
            }
            for kind, items in live.items():
                collection = Kind.registry[kind].collection
                for item in items:
                    await _seed_one(api, kind, collection, dict(item), names)

        self.run(go)


async def _seed_one(
    api: ApiClient,
    kind: str,
    collection: str,
    item: dict[str, Any],
    names: dict[str, dict[str, str]],
) -> None:
    members = item.pop("members", None)
    attachments = item.pop("attachments", None)
    status = item.pop("status", None)
    if "agent" in item:
        item["agentId"] = names["/agents"][item.pop("agent")]
    pools = {p["name"]: p["id"] for p in await api.list_all("/agent-profile-pools")}
    for entry in item.get("items", []):
        if "agentProfilePool" in entry:
            entry["agentProfilePoolId"] = pools[entry.pop("agentProfilePool")]
        if "agentProfile" in entry:
            entry["agentProfileId"] = names["/profiles"][entry.pop("agentProfile")]
    created = await api.request("POST", collection, json=item)
    if members:
        ids = [names["/profiles"][m] for m in members]
        path = f"{collection}/{created['id']}/members"
        await api.request("POST", path, json={"profileIds": ids}, idempotent=True)
    for attachment in attachments or []:
        agent_id = names["/agents"][attachment.pop("agent")]
        path = f"/agents/{agent_id}/webhooks/{created['id']}"
        await api.request("PUT", path, json=attachment)
    if status in ("paused", "cancelled"):  # a batch moved on (pause/cancel need no clock)
        action = "pause" if status == "paused" else "cancel"
        await api.request("POST", f"{collection}/{created['id']}/{action}")


def write_workspace(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def load(root: Path) -> Workspace:
    return load_workspace(root)
