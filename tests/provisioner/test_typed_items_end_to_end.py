"""Typed CSV columns reach the agent as numbers (issue 18): a batch whose itemsFile
says `amount:number` is applied to the in-process service on its manual clock, the
clock reaches startAt, and an agent whose script compares `inputs.amount > 100`
ends by the number, not by text (which would fail the comparison on every item)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path
from typing import Any

from agentform.api.client import ApiClient
from agentform.api.retries import RetryPolicy
from agentform.config.loader import load_workspace
from agentform.engine.apply import apply_plan
from agentform.engine.planner import make_plan
from agentform.kinds.context import PlanOptions
from agentform.service import DEMO_ADMIN_KEY, Seed, create_app
from agentform.service.http.inprocess import InProcessTransport
from agentform.service.runtime import ManualClock
from agentform.service.startup.seed_file import DEMO_SEED
from tests.provisioner.harness import BASE_URL, write_workspace

REFUNDS = {
    "name": "amount-agent",
    "script": {
        "steps": [{"message": "Refund {{ inputs.amount }}", "duration": 1}],
        "end": [
            {"when": "inputs.amount > 100", "result": {"review": "{{ inputs.urgent }}"}},
            {"result": {"review": False}},
        ],
    },
}
CSV = "order,amount:number,urgent:boolean\nA-1,120.5,true\nA-2,99,false\n"


def _seed() -> Seed:
    data = DEMO_SEED.model_dump(mode="json")
    data["organizations"][0]["agents"].append(REFUNDS)
    return Seed.model_validate(data)


async def _scenario(root: Path, db: Path) -> list[dict[str, Any]]:
    clock = ManualClock()
    app = create_app(db, seed=_seed(), clock=clock)
    start = (clock.now() + timedelta(hours=1)).isoformat()
    write_workspace(
        root,
        {
            "agentform.yaml": "workspace: refunds\n",
            "refunds.csv": CSV,
            "batches.yaml": f"batches:\n  - name: refunds\n    agent: amount-agent\n"
            f"    startAt: '{start}'\n"
            "    config: {type: timeBatching, batchSize: 10, batchInterval: 60}\n"
            "    itemsFile: refunds.csv\n",
        },
    )
    transport = InProcessTransport(app)
    async with ApiClient(
        BASE_URL, DEMO_ADMIN_KEY, transport=transport, retry=RetryPolicy(attempts=2)
    ) as api:
        workspace = load_workspace(root)
        plan = await make_plan(workspace, api, "e2e", PlanOptions(now=clock.now()))
        assert (await apply_plan(plan, api, values={})).ok
        (batch,) = await api.list_all("/execution-batches")
        await clock.advance(3600)
        for _ in range(100):
            runs = await api.list_all("/executions", {"batchId": batch["id"]})
            if len(runs) == 2 and all(r["status"] in ("completed", "failed") for r in runs):
                return [await api.request("GET", f"/executions/{r['id']}") for r in runs]
            await clock.advance(5)
        raise AssertionError(f"the batch did not run: {runs}")


def test_typed_columns_reach_the_agent_as_numbers_and_booleans(tmp_path: Path) -> None:
    runs = asyncio.run(_scenario(tmp_path / "ws", tmp_path / "service.db"))
    by_order = {r["inputs"]["order"]: r for r in runs}
    assert by_order["A-1"]["inputs"] == {"order": "A-1", "amount": 120.5, "urgent": True}
    assert by_order["A-2"]["inputs"] == {"order": "A-2", "amount": 99, "urgent": False}
    assert [by_order[o]["status"] for o in ("A-1", "A-2")] == ["completed", "completed"]
    assert by_order["A-1"]["result"] == {"review": True}  # compared as numbers
    assert by_order["A-2"]["result"] == {"review": False}
