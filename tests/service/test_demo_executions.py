"""The demo seed's agents (what `agentform service run` starts with): with a pause, a
resume, a cancel and a user message they emit every execution event
(docs/service/contract.md#events-and-payloads), each runs a second or more, and all are
done within 10 seconds."""

from __future__ import annotations

from pathlib import Path

from agentform.rules.webhook_events import EXECUTION_EVENTS
from agentform.service import DEMO_ADMIN_KEY, DEMO_SEED
from agentform.service.runtime import ManualClock
from tests.service.conftest import running
from tests.service.execution_support import event_names, execute, status_of
from tests.service.templates import seeded_app


def test_the_demo_agents_show_the_whole_lifecycle_within_ten_seconds(tmp_path: Path) -> None:
    app = seeded_app(tmp_path / "service.db", seed=DEMO_SEED, clock=ManualClock())
    with running(app, DEMO_ADMIN_KEY) as (api, advance):
        agents = api.ids("/agents")
        checkout = execute(api, agents["checkout-agent"])
        support = execute(api, agents["support-agent"])
        refund = execute(api, agents["refund-agent"])
        cancelled = execute(api, agents["support-agent"])
        advance(1)  # a second in, every one of them is still running
        assert {status_of(api, e) for e in (checkout, support, refund, cancelled)} == {"running"}
        api.post(f"/executions/{support}/pause")
        api.post(f"/executions/{cancelled}/cancel")
        advance(1)
        api.post(f"/executions/{support}/resume")
        assert status_of(api, checkout) == "awaiting_confirmation"
        api.post(f"/executions/{checkout}/user-messages", json={"message": "yes, charge it"})
        advance(8)  # ten seconds in all
        assert status_of(api, checkout) == "completed"
        assert status_of(api, support) == "completed"
        assert status_of(api, refund) == "failed"
        assert status_of(api, cancelled) == "cancelled"
        emitted = {
            name for e in (checkout, support, refund, cancelled) for name in event_names(app, e)
        }
        assert emitted == set(EXECUTION_EVENTS)
        assert len(EXECUTION_EVENTS) == 19
    app.state.db.close()


def test_the_demo_refund_agent_succeeds_with_a_small_amount(tmp_path: Path) -> None:
    app = seeded_app(tmp_path / "service.db", seed=DEMO_SEED, clock=ManualClock())
    with running(app, DEMO_ADMIN_KEY) as (api, advance):
        refund = execute(api, api.ids("/agents")["refund-agent"], inputs={"amount": 20})
        advance(5)
        got = api.get(f"/executions/{refund}").json()
        assert got["status"] == "completed" and got["result"]["refunded"] == 20
    app.state.db.close()
