"""Durability: a service stopped mid-execution and started again on the same file
carries every execution on from where it was, and repeats nothing it had done."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from pathlib import Path

from agentform.service import create_app
from agentform.service.clock import MANUAL_START
from agentform.service.runtime import ManualClock
from tests.service.execution_support import (
    EXEC_KEY,
    EXEC_SEED,
    event_log,
    event_names,
    execute,
    service,
)
from tests.service.execution_support import status_of as status
from tests.service.templates import seeded_app


def test_executions_continue_after_a_restart_on_the_same_file(tmp_path: Path) -> None:
    path = tmp_path / "service.db"
    first = seeded_app(path, seed=EXEC_SEED, clock=ManualClock(MANUAL_START))
    with service(first) as (api, advance):
        agents = api.ids("/agents")
        steady = execute(api, agents["steady"])
        paused = execute(api, agents["steady"])
        awaiting = execute(api, agents["scripted"])
        advance(1.5)  # steady is half way through step 2
        api.post(f"/executions/{paused}/pause")
        advance(0.5)
        assert status(api, awaiting) == "awaiting_confirmation"
        done_before = event_log(first, steady)
    first.state.db.close()

    # A new process on the same file, started when the first one stopped.
    second = create_app(
        path, seed=EXEC_SEED, clock=ManualClock(MANUAL_START + timedelta(seconds=2))
    )
    with service(second, EXEC_KEY) as (api, advance):
        assert event_log(second, steady) == done_before
        advance(0.999)
        assert status(api, steady) == "running"
        advance(0.001)  # due at t=3 exactly, as if nothing had happened
        assert status(api, steady) == "completed"
        names = event_names(second, steady)
        assert names[: len(done_before)] == [n for n, _ in done_before]
        assert Counter(names)["EXECUTION_STEP_PROCESSED"] == 3
        assert Counter(names)["EXECUTION_STARTED"] == 1
        assert names[-1] == "EXECUTION_COMPLETED"

        assert status(api, paused) == "paused"  # still waiting for its resume
        api.post(f"/executions/{paused}/resume")
        api.post(f"/executions/{awaiting}/user-messages", json={"message": "go"})
        advance(5)
        assert status(api, paused) == "completed"
        assert status(api, awaiting) == "completed"
        assert Counter(event_names(second, paused))["EXECUTION_STEP_PROCESSED"] == 3
    second.state.db.close()


def test_a_step_that_fell_due_while_the_service_was_down_runs_at_once(tmp_path: Path) -> None:
    path = tmp_path / "service.db"
    first = seeded_app(path, seed=EXEC_SEED, clock=ManualClock(MANUAL_START))
    with service(first) as (api, advance):
        steady = execute(api, api.ids("/agents")["steady"])
        advance(0.5)
    first.state.db.close()
    later = create_app(path, seed=EXEC_SEED, clock=ManualClock(MANUAL_START + timedelta(hours=1)))
    with service(later) as (api, advance):
        advance(0)  # overdue: step 1 ends now, then the rest at its own pace
        assert event_names(later, steady)[-1] == "EXECUTION_MESSAGE_ADDED"
        advance(2)
        assert status(api, steady) == "completed"
    later.state.db.close()
