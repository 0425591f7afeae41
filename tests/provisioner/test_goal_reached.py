"""A change whose goal is found reached when its call fails is not a failure
(issue 10, defects 2 and 3): a create answered 409 by the object asked for is
adopted, a delete answered 404 is done, two applies at once both succeed; a 409
by an object that differs is a conflict."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from starlette.types import Message, Receive, Scope, Send

from agentform.config.loader import load_workspace
from agentform.engine.apply import ApplyReport, apply_plan
from agentform.engine.planner import make_plan
from agentform.output.json_view import report_document
from tests.provisioner.harness import Service, write_workspace

POOLS = "/agent-profile-pools"


class LandsLater:
    """The first create of a pool times out at the gateway (504) without reaching the
    service; it lands just before the client's retry arrives, so the retry is 409."""

    def __init__(self, service: Service) -> None:
        self.app = service.log.app
        self.held: tuple[Scope, bytes] | None = None
        self.done = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "").removeprefix("/agents/v2")
        if scope["type"] == "http" and (scope["method"], path) == ("POST", POOLS):
            body = await _body(receive)
            if self.held is None and not self.done:
                self.held = (scope, body)
                await _answer(send, 504, {"code": 504, "message": "gateway timeout"})
                return
            if self.held is not None:  # the first attempt lands now
                held_scope, held_body = self.held
                self.held, self.done = None, True
                await self.app(held_scope, _replay(held_body), _drop)
            await self.app(scope, _replay(body), send)
            return
        await self.app(scope, receive, send)


async def _body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


def _replay(body: bytes) -> Receive:
    async def receive() -> Message:
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


async def _drop(message: Message) -> None:
    return None


async def _answer(send: Send, status: int, body: dict[str, Any]) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": json.dumps(body).encode()})


def pools(service: Service) -> list[dict[str, Any]]:
    return service.run(lambda api: api.list_all(POOLS))


def test_a_retried_create_answered_409_by_its_own_landing_is_adopted(
    service: Service, ws: Path
) -> None:
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\n",
            "pools.yaml": "profilePools:\n"
            "  - {name: a, allowConcurrentUse: true, members: [bot-1]}\n",
        },
    )
    service.log.app = LandsLater(service)
    report = service.apply(ws)
    assert report.ok, report_document(report, "ws")
    assert [r.status for r in report.results] == ["succeeded"]
    assert [p["name"] for p in pools(service)] == ["a"]
    assert not service.plan(ws).has_changes  # its member was added too


def test_a_409_by_an_object_that_differs_is_a_conflict(service: Service, ws: Path) -> None:
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\n",
            "pools.yaml": "profilePools:\n  - {name: a, allowConcurrentUse: true}\n",
        },
    )
    plan = service.plan(ws)
    service.seed_live({"profilePools": [{"name": "a", "allowConcurrentUse": False}]})
    report = service.apply(ws, plan)
    (result,) = report.results
    assert result.status == "failed"
    assert "exists already and differs from the files (allowConcurrentUse)" in (result.error or "")


def two_applies_at_once(service: Service, ws: Path) -> tuple[ApplyReport, ApplyReport]:
    workspace = load_workspace(ws)

    async def both(api: Any) -> tuple[ApplyReport, ApplyReport]:
        first, second = await asyncio.gather(
            make_plan(workspace, api, "test"), make_plan(workspace, api, "test")
        )
        one, two = await asyncio.gather(apply_plan(first, api), apply_plan(second, api))
        return one, two

    return service.run(both)


def test_two_applies_at_once_both_succeed_and_say_what_was_in_place(
    service: Service, ws: Path
) -> None:
    service.seed_live(
        {
            "profilePools": [{"name": "old"}, {"name": "keep", "members": ["bot-1", "bot-2"]}],
            "profileGroups": [{"name": "gone"}],
        }
    )
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\n",
            "pools.yaml": "profilePools:\n"
            "  - {name: a, members: [bot-1, bot-2]}\n"
            "  - {name: b, selectionStrategy: most_recently_used}\n"
            "  - {name: old, ensure: absent}\n"
            "  - {name: keep, members: [bot-3]}\n"
            "profileGroups:\n  - {name: g, members: [bot-1]}\n  - {name: gone, ensure: absent}\n"
            "vaultTemplates:\n  - name: T\n    kind: custom\n"
            "    fields: [{type: text, label: Note, required: false}]\n",
        },
    )
    one, two = two_applies_at_once(service, ws)
    assert one.ok and two.ok, (report_document(one, "ws"), report_document(two, "ws"))
    statuses = sorted((r.change.id, r.status) for report in (one, two) for r in report.results)
    in_place = [cid for cid, status in statuses if status == "already in place"]
    # each create and delete was made by one apply and found made by the other
    for cid in ("profilePools/b", "profilePools/old", "profileGroups/gone", "vaultTemplates/T"):
        assert statuses.count((cid, "succeeded")) == 1 and cid in in_place, statuses
    # a create with members: the second apply found the object, and still added
    # the members itself (an add that changes nothing is a call made)
    for cid in ("profilePools/a", "profileGroups/g", "profilePools/keep"):
        assert statuses.count((cid, "succeeded")) == 2, statuses
    assert report_document(one, "ws")["alreadyInPlace"] + report_document(two, "ws")[
        "alreadyInPlace"
    ] == len(in_place)
    assert not service.plan(ws).has_changes
    assert sorted(p["name"] for p in pools(service)) == ["a", "b", "keep"]


def test_a_delete_answered_404_is_already_in_place(service: Service, ws: Path) -> None:
    service.seed_live({"profilePools": [{"name": "old"}]})
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\n",
            "pools.yaml": "profilePools:\n  - {name: old, ensure: absent}\n",
        },
    )
    plan = service.plan(ws)

    async def delete_it(api: Any) -> None:
        (pool,) = await api.list_all(POOLS)
        await api.request("DELETE", f"{POOLS}/{pool['id']}")

    service.run(delete_it)
    report = service.apply(ws, plan)
    assert report.ok and [r.status for r in report.results] == ["already in place"]
    assert report_document(report, "ws")["failed"] == 0


class LandsThenFails:
    """Every update and member change reaches the service and is made, but each
    answer is lost: the gateway says 503, on every attempt."""

    def __init__(self, service: Service) -> None:
        self.app = service.log.app
        self.lost: list[str] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope.get("method")
        path = scope.get("path", "").removeprefix("/agents/v2")
        if scope["type"] == "http" and path.startswith(f"{POOLS}/") and method != "GET":
            await self.app(scope, receive, _drop)
            self.lost.append(f"{method} {path.removeprefix(POOLS)}")
            await _answer(send, 503, {"code": 503, "message": "gateway error"})
            return
        await self.app(scope, receive, send)


def test_an_update_and_member_changes_whose_answers_are_lost_are_done(
    service: Service, ws: Path
) -> None:
    """Their goals are read back: the fields as sent, the members in, the members out."""
    service.seed_live(
        {
            "profilePools": [
                {"name": "a", "allowConcurrentUse": False, "members": ["bot-1", "bot-2"]}
            ]
        }
    )
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\n",
            "pools.yaml": "profilePools:\n"
            "  - {name: a, allowConcurrentUse: true, members: [bot-2, bot-3]}\n",
        },
    )
    gateway = LandsThenFails(service)
    service.log.app = gateway
    report = service.apply(ws)
    assert report.ok, report_document(report, "ws")
    assert {r.status for r in report.results} == {"succeeded"}
    lost = {
        call.split(" ")[0] + (" members" if call.endswith("/members") else "")
        for call in gateway.lost
    }
    assert lost == {"PATCH", "POST members", "DELETE members"}, gateway.lost
    service.log.app = gateway.app
    assert not service.plan(ws).has_changes
