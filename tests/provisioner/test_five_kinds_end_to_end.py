"""End to end on the in-process service with its manual clock: a workspace of all
five kinds is applied and plans clean; an execution of the attached agent sends
the receiver (on loopback) exactly the signed notifications its attachment asks
for; the clock moves and the batch's executions run, BATCH_COMPLETED arrives, and
the workspace still plans clean."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from agentform.api.client import ApiClient
from agentform.api.retries import RetryPolicy
from agentform.config.loader import load_workspace
from agentform.engine.apply import apply_plan
from agentform.engine.model import Plan
from agentform.engine.planner import make_plan
from agentform.kinds.context import PlanOptions
from agentform.output.text import TextView
from agentform.rules.signatures import SIGNATURE_HEADER, verify
from agentform.service import DEMO_ADMIN_KEY, create_app
from agentform.service.http.inprocess import InProcessTransport
from agentform.service.runtime import ManualClock
from agentform.service.settings import ServiceSettings
from tests.provisioner.harness import BASE_URL, write_workspace
from tests.webhooks.receiver import Receiver, running_receiver

TOKEN = "e2e-token-5b7d"
TERMINAL = ("completed", "failed", "cancelled")

WORKSPACE = """\
workspace: five-kinds
profilePools:
  - {{name: checkout-eu, members: [bot-1, bot-2], allowConcurrentUse: true}}
profileGroups:
  - {{name: eu-profiles, members: [bot-1, bot-3]}}
vaultTemplates:
  - name: Shop login
    kind: login
    fields: [{{type: username, label: Username, required: true}}]
webhooks:
  - name: ops-alerts
    url: {url}
    headers:
      Authorization: "Bearer {{{{ secret('OPS_TOKEN') }}}}"
    attachments:
      - agent: support-agent
        eventRules: [EXECUTION_COMPLETED, EXECUTION_FAILED]
        metadataFilter: {{team: payments}}
  - name: batch-alerts          # batch events carry no execution metadata: no filter here
    url: {url}
    attachments:
      - {{agent: support-agent, eventRules: [BATCH_STARTED, BATCH_COMPLETED]}}
batches:
  - name: nightly
    agent: support-agent
    startAt: {start}
    config: {{type: timeBatching, batchSize: 2, batchInterval: 60}}
    items:
{{% for question in ["Where is A-1?", "Where is A-2?", "Where is A-3?"] %}}
      - inputs: {{question: "{{{{ question }}}}"}}
        metadata: {{team: payments}}
        agentProfilePool: checkout-eu
{{% endfor %}}
"""


class EndToEnd:
    """The service on a manual clock, and the provisioner's client to it, on one loop."""

    def __init__(self, db: Path, root: Path) -> None:
        self.clock = ManualClock()
        self.app = create_app(db, clock=self.clock, settings=ServiceSettings(platform_url=BASE_URL))
        self.root = root
        self.api = ApiClient(
            BASE_URL,
            DEMO_ADMIN_KEY,
            transport=InProcessTransport(self.app),
            retry=RetryPolicy(attempts=2),
        )

    def options(self) -> PlanOptions:
        return PlanOptions(now=self.clock.now())  # the service's time, not the machine's

    async def plan(self) -> Plan:
        workspace = load_workspace(self.root, environ={"OPS_TOKEN": TOKEN})
        return await make_plan(workspace, self.api, "e2e", self.options())

    async def apply(self) -> bool:
        workspace = load_workspace(self.root, environ={"OPS_TOKEN": TOKEN})
        plan = await make_plan(workspace, self.api, "e2e", self.options())
        report = await apply_plan(plan, self.api, values=workspace.sensitive_values())
        return report.ok

    async def deliveries(self) -> list[tuple[str, str, str]]:
        """(integration, event, status) of every delivery the service has made or owes."""
        out = []
        for hook in await self.api.list_all("/webhook-integrations"):
            path = f"/webhook-integrations/{hook['id']}/deliveries"
            out += [(hook["name"], d["event"], d["status"]) for d in await self.api.list_all(path)]
        return sorted(out)

    async def settle(self, executions: list[str]) -> list[tuple[str, str, str]]:
        """Moves the clock until these executions are over and no delivery is pending;
        the deliveries then."""
        for _ in range(100):
            runs = [await self.api.request("GET", f"/executions/{e}") for e in executions]
            made = await self.deliveries()
            if all(r["status"] in TERMINAL for r in runs) and all(d[2] != "pending" for d in made):
                return made
            await self.clock.advance(5)
            await asyncio.sleep(0.05)  # the loopback receiver answers on its own thread
        raise AssertionError(f"not settled at {self.clock.now()}: {made}")

    async def until(self, receiver: Receiver, count: int, step: float = 5.0) -> None:
        """Moves the clock in steps until the receiver holds `count` requests."""
        for _ in range(60):
            if len(receiver.received) >= count:
                return
            await self.clock.advance(step)
            await asyncio.sleep(0.05)  # the receiver's thread records what arrived
        raise AssertionError(f"{receiver.events()} ({self.clock.now()}), not {count}")


def test_five_kinds_apply_notify_and_run_on_the_clock(tmp_path: Path) -> None:
    with running_receiver() as receiver:
        asyncio.run(_scenario(tmp_path, receiver))


async def _scenario(tmp_path: Path, receiver: Receiver) -> None:
    root = tmp_path / "ws"
    e2e = EndToEnd(tmp_path / "service.db", root)
    start = (e2e.clock.now() + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    write_workspace(root, {"agentform.yaml": WORKSPACE.format(url=receiver.url, start=start)})
    async with e2e.api:
        first = await e2e.plan()
        assert sorted({c.kind for c in first.changes}) == [
            "batches",
            "profileGroups",
            "profilePools",
            "vaultTemplates",
            "webhookAttachments",
            "webhooks",
        ]
        assert await e2e.apply()
        again = await e2e.plan()
        assert not again.has_changes, TextView().plan(again)

        # An execution of the attached agent, with the metadata the attachment asks for,
        # and one without: only the first notifies, and only of the events asked for.
        agents = {a["name"]: a["id"] for a in await e2e.api.list_all("/agents")}
        support = agents["support-agent"]  # its script runs to completion on its own
        asked = await _execute(e2e.api, support, {"team": "payments"})
        other = await _execute(e2e.api, support, {"team": "other"})
        # Both ran to the end (every event of both was emitted); the service owes one
        # delivery only, and made it: the EXECUTION_COMPLETED of the execution asked for.
        assert await e2e.settle([asked, other]) == [
            ("ops-alerts", "EXECUTION_COMPLETED", "delivered")
        ]
        for execution in (asked, other):
            run = await e2e.api.request("GET", f"/executions/{execution}")
            assert run["status"] == "completed"
        key = (await e2e.api.request("GET", "/webhook-signing-key"))["publicKeyPem"]
        direct = list(receiver.received)  # recorded before the receiver answered
        assert [(r.event, r.json()["info"]["execution_id"]) for r in direct] == [
            ("EXECUTION_COMPLETED", asked)
        ]
        for got in direct:
            assert verify(got.body, got.headers[SIGNATURE_HEADER], key)
            assert got.headers["Authorization"] == f"Bearer {TOKEN}"  # the custom header

        # The clock reaches startAt: the batch runs its three items, two a minute.
        receiver.clear()
        (batch,) = await e2e.api.list_all("/execution-batches")
        assert batch["status"] == "pending" and batch["triggeredCount"] == 0
        await e2e.clock.advance(3600)
        await e2e.until(receiver, 5)
        runs = await e2e.api.list_all("/executions", {"batchId": batch["id"]})
        assert await e2e.settle([r["id"] for r in runs]) == [
            ("batch-alerts", "BATCH_COMPLETED", "delivered"),
            ("batch-alerts", "BATCH_STARTED", "delivered"),
            *[("ops-alerts", "EXECUTION_COMPLETED", "delivered")] * 4,  # 1 earlier, 3 now
        ]
        runs = await e2e.api.list_all("/executions", {"batchId": batch["id"]})
        earliest = min(datetime.fromisoformat(r["startedAt"]) for r in runs)
        assert earliest >= datetime.fromisoformat(start)  # not before the clock got there
        events = sorted(str(r.event) for r in receiver.received)
        assert events == [
            "BATCH_COMPLETED",
            "BATCH_STARTED",
            "EXECUTION_COMPLETED",
            "EXECUTION_COMPLETED",
            "EXECUTION_COMPLETED",
        ]
        for got in receiver.received:
            assert verify(got.body, got.headers[SIGNATURE_HEADER], key)
            # ops-alerts carries the custom header, batch-alerts has none
            expected = f"Bearer {TOKEN}" if got.event == "EXECUTION_COMPLETED" else None
            assert got.headers.get("Authorization") == expected
        (batch,) = await e2e.api.list_all("/execution-batches")
        assert batch["status"] == "completed" and batch["triggeredCount"] == 3
        runs = await e2e.api.list_all("/executions", {"batchId": batch["id"]})
        assert sorted(r["status"] for r in runs) == ["completed"] * 3
        pool = {p["name"]: p["id"] for p in await e2e.api.list_all("/agent-profile-pools")}
        assert {r["agentProfilePoolId"] for r in runs} == {pool["checkout-eu"]}
        completed = next(r for r in receiver.received if r.event == "BATCH_COMPLETED")
        payload = completed.json()["info"]["payload"]
        assert (payload["batch_name"], payload["triggered_count"]) == ("nightly", 3)
        executed = {
            r.json()["info"]["execution_id"]
            for r in receiver.received
            if r.event == "EXECUTION_COMPLETED"
        }
        assert executed == {r["id"] for r in runs}  # one notification per batch execution

        # A finished batch that still matches the files is left alone.
        final = await e2e.plan()
        assert not final.has_changes, TextView().plan(final)


async def _execute(api: ApiClient, agent_id: str, metadata: dict[str, str]) -> str:
    answer: dict[str, Any] = await api.request(
        "POST", f"/agents/{agent_id}/execute", json={"metadata": metadata}
    )
    return str(answer["executionId"])
