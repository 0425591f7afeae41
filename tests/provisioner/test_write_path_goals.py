"""Every write of an apply is checked (issue 20): a batch's cancel is read back
before it is sent again and when it fails, so a 503, a lost answer or another
apply's cancel is not a failure; an attachment's PUT or DELETE whose answers are
all lost is read back from its agent's list."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.types import Receive, Scope, Send

from agentform.output.json_view import report_document
from tests.provisioner.harness import Service, write_workspace
from tests.provisioner.test_goal_reached import _answer, _drop

BATCHES = "/execution-batches"
START = "2099-01-01T00:00:00Z"
Matches = Callable[[str, str], bool]


class Gateway:
    """In front of the service: the first `times` requests that `matches` are
    answered 503, after reaching the service (`lands`) or without reaching it."""

    def __init__(self, service: Service, matches: Matches, lands: bool, times: int = 99) -> None:
        self.app = service.log.app
        self.matches = matches
        self.lands = lands
        self.left = times
        self.lost: list[str] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope.get("method", "")
        path = scope.get("path", "").removeprefix("/agents/v2")
        if scope["type"] == "http" and self.left > 0 and self.matches(method, path):
            self.left -= 1
            if self.lands:
                await self.app(scope, receive, _drop)
            self.lost.append(f"{method} {path}")
            await _answer(send, 503, {"code": 503, "message": "gateway error"})
            return
        await self.app(scope, receive, send)


def cancels(method: str, path: str) -> bool:
    return method == "POST" and path.endswith("/cancel")


def batch(name: str, size: int) -> dict[str, Any]:
    return {
        "name": name,
        "agent": "support-agent",
        "startAt": START,
        "config": {"type": "timeBatching", "batchSize": size, "batchInterval": 60},
        "items": [{"inputs": {"question": "Where is A-1?"}}],
    }


def batches_workspace(ws: Path, service: Service) -> None:
    """Live: `gone` and `changed` (pending); the files cancel one, replace the other."""
    service.seed_live({"batches": [batch("gone", 2), batch("changed", 2)]})
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\n",
            "batches.yaml": "batches:\n"
            "  - {name: gone, agent: support-agent, ensure: absent}\n"
            f"  - name: changed\n    agent: support-agent\n    startAt: '{START}'\n"
            "    config: {type: timeBatching, batchSize: 3, batchInterval: 60}\n"
            "    items: [{inputs: {question: Where is A-1?}}]\n",
        },
    )


def statuses(service: Service) -> list[tuple[str, str]]:
    return sorted((b["name"], b["status"]) for b in service.run(lambda a: a.list_all(BATCHES)))


def test_a_cancel_refused_with_503_is_read_back_and_sent_again(service: Service, ws: Path) -> None:
    batches_workspace(ws, service)
    service.log.app = gateway = Gateway(service, cancels, lands=False, times=2)
    report = service.apply(ws)
    assert report.ok, report_document(report, "ws")
    assert [r.status for r in report.results] == ["succeeded", "succeeded"]
    assert len(gateway.lost) == 2
    service.log.app = gateway.app
    assert statuses(service) == [
        ("changed", "cancelled"),
        ("changed", "pending"),
        ("gone", "cancelled"),
    ]
    assert not service.plan(ws).has_changes


def test_a_cancel_whose_answers_are_lost_is_done_and_the_replace_goes_on(
    service: Service, ws: Path
) -> None:
    batches_workspace(ws, service)
    service.log.app = gateway = Gateway(service, cancels, lands=True)
    report = service.apply(ws)
    assert report.ok, report_document(report, "ws")
    assert [r.status for r in report.results] == ["succeeded", "succeeded"]
    # each cancel was sent once: read back before a retry, it was found done
    assert sorted(p.rsplit("/", 2)[0] for p in gateway.lost) == [
        f"POST {BATCHES}",
        f"POST {BATCHES}",
    ]
    service.log.app = gateway.app
    assert not service.plan(ws).has_changes


def test_a_cancel_another_apply_made_is_already_in_place(service: Service, ws: Path) -> None:
    """Two applies of the same files: the second's cancel meets 409 'cannot cancel a
    batch that is cancelled', which is its goal reached, not a failure."""
    service.seed_live({"batches": [batch("gone", 2)]})
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\n",
            "batches.yaml": "batches:\n  - {name: gone, agent: support-agent, ensure: absent}\n",
        },
    )
    plan = service.plan(ws)
    first = service.apply(ws, plan)
    second = service.apply(ws, plan)  # planned before the first one cancelled it
    assert first.ok and second.ok, report_document(second, "ws")
    assert [r.status for r in first.results] == ["succeeded"]
    assert [r.status for r in second.results] == ["already in place"]
    assert report_document(second, "ws")["alreadyInPlace"] == 1


ATTACHMENT = re.compile(r"^/agents/[^/]+/webhooks/[^/]+$")


def attachments(method: str, path: str) -> bool:
    return method in ("PUT", "DELETE") and bool(ATTACHMENT.match(path))


def webhooks_workspace(ws: Path, rules: str, second: bool) -> None:
    agents = "      - {agent: support-agent, eventRules: " + rules + "}\n"
    if second:
        agents += "      - {agent: refund-agent, eventRules: [EXECUTION_FAILED]}\n"
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\n",
            "webhooks.yaml": "webhooks:\n  - name: ops\n    url: https://hooks.example.com/x\n"
            "    attachments:\n" + agents,
        },
    )


def test_attachment_writes_whose_answers_are_lost_are_read_back_and_done(
    service: Service, ws: Path
) -> None:
    webhooks_workspace(ws, "[EXECUTION_COMPLETED]", second=True)
    assert service.apply(ws).ok
    # an update (PUT) and a removal (DELETE), each answered 503 on every attempt
    webhooks_workspace(ws, "[EXECUTION_FAILED, EXECUTION_COMPLETED]", second=False)
    service.log.app = gateway = Gateway(service, attachments, lands=True)
    report = service.apply(ws)
    assert report.ok, report_document(report, "ws")
    assert [r.status for r in report.results] == ["succeeded", "succeeded"]
    assert {call.split(" ")[0] for call in gateway.lost} == {"PUT", "DELETE"}
    service.log.app = gateway.app
    assert not service.plan(ws).has_changes
