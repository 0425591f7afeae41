"""A small world for the console's tests: the execution seed's service on a manual
clock, two webhook integrations answered in-process (the first attempt gets a 500
whose body holds markup), a failed execution whose metadata holds a script tag,
and a completed one."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI

from agentform.service import create_app
from agentform.service.runtime import ManualClock
from tests.service.console.support import Advance, Console, running_console
from tests.service.execution_support import EXEC_KEY, EXEC_SEED, execute

HOSTILE = "<script>alert('x')</script>"
HOOKS = "https://hooks.example.test"


class Receiver(httpx.AsyncBaseTransport):
    """Answers webhook deliveries: 500 (with markup in its body) the first time."""

    def __init__(self) -> None:
        self.seen: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        if len(self.seen) == 1:
            body = f'down {HOSTILE} "quoted" \\ ünïcode'.encode()
            return httpx.Response(500, stream=httpx.ByteStream(body))
        return httpx.Response(200, stream=httpx.ByteStream(b"ok"))


@dataclass
class World:
    app: FastAPI
    console: Console
    api: Any
    advance: Advance
    receiver: Receiver
    failed: str
    completed: str
    agent: str
    integrations: dict[str, str]


def attach(api: Any, agent: str, name: str, **settings: Any) -> str:
    made = api.post("/webhook-integrations", json={"name": name, "url": f"{HOOKS}/{name}"})
    assert made.status_code == 201, made.text
    integration = str(made.json()["id"])
    put = api.request("PUT", f"/agents/{agent}/webhooks/{integration}", json=settings)
    assert put.status_code == 200, put.text
    return integration


def finish(api: Any, advance: Advance, execution: str) -> None:
    advance(0)
    advance(2)
    api.post(f"/executions/{execution}/user-messages", json={"message": "yes"})
    advance(1)
    advance(10)  # retries


@dataclass(frozen=True)
class Made:
    failed: str
    completed: str
    agent: str
    integrations: dict[str, str]


def populate(api: Any, advance: Advance) -> Made:
    """Two integrations on the scripted agent, a failed execution (its metadata holds
    a script tag) and a completed one, run to their ends with their deliveries."""
    agent = api.ids("/agents")["scripted"]
    integrations = {
        "alerts": attach(api, agent, "alerts", eventRules=["EXECUTION_FAILED"]),
        "audit": attach(api, agent, "audit", eventRules=["*"], metadataFilter={"team": "payments"}),
    }
    failed = execute(
        api, agent, inputs={"order": "F-1", "outcome": "fail"}, metadata={"team": HOSTILE}
    )
    finish(api, advance, failed)
    completed = execute(api, agent, inputs={"order": "C-1"}, metadata={"team": "payments"})
    finish(api, advance, completed)
    return Made(failed, completed, agent, integrations)


def service_app(directory: Path, receiver: Receiver) -> FastAPI:
    return create_app(
        directory / "service.db", seed=EXEC_SEED, clock=ManualClock(), webhook_transport=receiver
    )


def make_world(directory: Path) -> Iterator[World]:
    receiver = Receiver()
    app = service_app(directory, receiver)
    try:
        with running_console(app, EXEC_KEY) as (console, api, advance):
            made = populate(api, advance)
            yield World(
                app,
                console,
                api,
                advance,
                receiver,
                made.failed,
                made.completed,
                made.agent,
                made.integrations,
            )
    finally:
        app.state.db.close()
