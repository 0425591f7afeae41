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

from agentform.api.client import ApiClient, RetryPolicy
from agentform.config.loader import Workspace, load_workspace
from agentform.engine.apply import ApplyReport, apply_plan
from agentform.engine.model import Plan
from agentform.engine.planner import make_plan
from agentform.kinds import Kind
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

    def plan(self, root: Path, **load: Any) -> Plan:
        workspace = load_workspace(root, **load)
        return self.run(lambda api: make_plan(workspace, api, "test"))

    def apply(self, root: Path, plan: Plan | None = None) -> ApplyReport:
        workspace = load_workspace(root)

        async def go(api: ApiClient) -> ApplyReport:
            the_plan = plan or await make_plan(workspace, api, "test")
            return await apply_plan(the_plan, api, values=workspace.sensitive_values())

        return self.run(go)

    def seed_live(self, live: dict[str, list[dict[str, Any]]]) -> None:
        """Creates live objects described as in the workspace format (members by name)."""

        async def go(api: ApiClient) -> None:
            profiles = {p["name"]: p["id"] for p in await api.list_all("/profiles")}
            for kind, items in live.items():
                collection = Kind.registry[kind].collection
                for item in items:
                    body = {k: v for k, v in item.items() if k != "members"}
                    created = await api.request("POST", collection, json=body)
                    if item.get("members"):
                        ids = [profiles[m] for m in item["members"]]
                        await api.request(
                            "POST",
                            f"{collection}/{created['id']}/members",
                            json={"profileIds": ids},
                            idempotent=True,
                        )

        self.run(go)


def write_workspace(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def load(root: Path) -> Workspace:
    return load_workspace(root)
