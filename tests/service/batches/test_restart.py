"""A service restarted mid-batch on the same database file resumes the schedule: nothing
triggered twice, nothing skipped (docs/service/contract.md#execution-batches, on the
durable runtime)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from fastapi import FastAPI

from agentform.service import create_app
from agentform.service.clock import MANUAL_START
from agentform.service.runtime import ManualClock
from tests.service.batches.support import (
    BATCH_SEED,
    SCHED_KEY,
    all_items,
    at,
    batch_body,
    batch_events,
    counts,
    create,
    executions_of_batch,
    get,
    live_executions,
)
from tests.service.conftest import running


def _service(path: Path, seconds: float) -> FastAPI:
    clock = ManualClock(start=MANUAL_START + timedelta(seconds=seconds))
    return create_app(path, seed=BATCH_SEED, clock=clock)


@pytest.mark.parametrize("down_for", [0, 400])
def test_a_restart_mid_batch_resumes_the_schedule(tmp_path: Path, down_for: int) -> None:
    path = tmp_path / "service.db"
    first = _service(path, 0)
    with running(first, SCHED_KEY) as (api, advance):
        worker = api.ids("/agents")["worker"]
        body = batch_body(worker, "restarted", startAt=at(first, 30), items=[{}] * 25)
        batch_id = create(api, body)["id"]
        advance(100)  # t=100: slices at 30 and 90 are due; 4 run (until 120)
        before = get(api, batch_id)
        assert counts(before) == (5, 16, 4, 0, 0)
        triggered_before = {
            i["index"]: i["executionId"] for i in all_items(api, batch_id) if "executionId" in i
        }
    first.state.db.close()

    second = _service(path, 100 + down_for)
    with running(second, SCHED_KEY) as (api, advance):
        assert get(api, batch_id) == before  # as it was left
        advance(0)  # what fell due while it was down runs now, at once
        if down_for:
            # Down from 100 to 500: the 4 executions end (their steps were due at
            # 120) and 4 waiting items take their places; the last slice (150) falls due.
            assert counts(get(api, batch_id)) == (0, 17, 4 + 4, 0, 0)
        advance(2_000)
        after = get(api, batch_id)
        assert (after["status"], counts(after)) == ("completed", (0, 0, 25, 0, 0))
        items = all_items(api, batch_id)
        # Nothing triggered twice, nothing skipped: one execution per item, and the
        # items triggered before the restart kept theirs.
        executions = [i["executionId"] for i in items]
        assert len(set(executions)) == 25
        assert sorted(executions_of_batch(second, batch_id)) == sorted(executions)
        assert {i: e for i, e in enumerate(executions) if i in triggered_before} == triggered_before
        triggered = sorted(items, key=lambda i: (i["triggeredAt"], i["index"]))
        assert [i["index"] for i in triggered] == list(range(25))
        assert [e for e, _ in batch_events(second, batch_id)] == [
            "BATCH_STARTED",
            "BATCH_COMPLETED",
        ]
        assert live_executions(second, "scheduled") == 0
    second.state.db.close()
