"""`make demo`'s last step: a little activity in the quickstart's local service, to
look at in the web console (docs/guide/console.md).

On the local service's database (.agentform/service.db, beside agentform.yaml),
in-process, on a manual clock that starts a quarter of an hour ago:
- a checkout that fails (the card ending 0002 is declined) with metadata
  team=payments, so the ops-alerts webhook is sent its EXECUTION_FAILED; nothing
  listens on 127.0.0.1:8787 (unless `agentform webhook listen` does), so its
  attempts fail and the console shows why;
- a checkout that succeeds, and a support question.
It prints the failed execution's id.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import httpx

from agentform.service import DEMO_ADMIN_KEY, create_app
from agentform.service.clock import ManualClock, wall_now
from agentform.service.http.inprocess import InProcessTransport
from agentform.service.store.database import DEFAULT_DB_PATH

HERE = Path(__file__).parent


async def run() -> str:
    clock = ManualClock(start=wall_now().replace(microsecond=0) - timedelta(minutes=15))
    app = create_app(HERE / DEFAULT_DB_PATH, clock=clock)
    transport = InProcessTransport(app)
    key = {"X-Api-Key": DEMO_ADMIN_KEY}
    async with httpx.AsyncClient(
        transport=transport, base_url="http://local/agents/v2", headers=key
    ) as api:
        agents = {a["name"]: a["id"] for a in (await api.get("/agents")).json()["items"]}

        async def execute(agent: str, **body: object) -> str:
            answer = await api.post(f"/agents/{agents[agent]}/execute", json=body)
            answer.raise_for_status()
            return str(answer.json()["executionId"])

        team = {"team": "payments"}
        failed = await execute("checkout-agent", inputs={"card": "0002"}, metadata=team)
        paid = await execute("checkout-agent", inputs={"order": "A-1002"}, metadata=team)
        await execute("support-agent")
        await clock.advance(5)
        for checkout in (failed, paid):  # both wait for the charge to be confirmed
            await api.post(f"/executions/{checkout}/user-messages", json={"message": "yes"})
        await clock.advance(600)  # every step, every delivery attempt and its retries
    return failed


if __name__ == "__main__":
    print(f"the failed checkout: execution {asyncio.run(run())}")
