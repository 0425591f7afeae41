"""What an execute writes (`lifecycle.create_execution`): an execution that starts at
once is written started, in one insert of its row (not inserted queued, then moved),
and is then the same as one started later: status, start time, first wake-up, step
job and soft-timeout job; the row it answers is the row it wrote."""

from __future__ import annotations

from fastapi import FastAPI

from agentform.rules.execute import ExecuteRequest
from agentform.service.executions import lifecycle
from agentform.service.store import executions, jobs
from tests.service.execution_support import EXEC_ORG, SMALL_KEY, module_app, service

app = module_app("execute_writes")


def test_an_execution_that_starts_at_once_is_written_once(app: FastAPI) -> None:
    with service(app) as (api, _):
        agent_id = api.ids("/agents")["steady"]
    statements: list[str] = []
    with app.state.db.write() as conn:
        agent = lifecycle.agent_to_run(conn, EXEC_ORG, agent_id)
        conn.set_trace_callback(statements.append)
        request = ExecuteRequest.model_validate({"executionOptions": {"softTimeoutMins": 5}})
        row = lifecycle.create_execution(conn, agent, request, created_by=None)
        conn.set_trace_callback(None)
        stored = conn.execute("SELECT * FROM executions WHERE id = ?", (row.id,)).fetchone()
        assert row == executions.row(conn, row.id)  # the row it answers is the row it wrote
        step = jobs.pending_job(conn, lifecycle.step_key(row))
        timeout = jobs.pending_job(conn, f"execution:{row.id}:timeout")
    # (SQLite traces a statement again for each trigger it fires: counted once)
    writes = {
        s for s in statements if s.startswith(("INSERT INTO executions", "UPDATE executions"))
    }
    assert len(writes) == 1 and writes.pop().startswith("INSERT")
    assert (row.status, stored["status"], stored["pc"]) == ("starting", "starting", 0)
    assert stored["started_at"] is not None and stored["wake_at"] == row.wake_at
    assert step is not None and timeout is not None


def test_a_queued_execution_is_written_queued_and_starts_later(app: FastAPI) -> None:
    with service(app, SMALL_KEY) as (api, advance):  # at most 2 at once
        agent_id = api.ids("/agents")["steady"]
        running = [api.post(f"/agents/{agent_id}/execute", json={}).json() for _ in range(2)]
        queued = api.post(f"/agents/{agent_id}/execute", json={"onCapacityLimit": "queue"})
        queued_id = queued.json()["executionId"]
        assert [r["status"] for r in running] == ["starting", "starting"]
        assert queued.json()["status"] == "queued"
        with app.state.db.read() as conn:
            row = conn.execute(
                "SELECT started_at, wake_at FROM executions WHERE id = ?", (queued_id,)
            ).fetchone()
        assert tuple(row) == (None, None)
        api.post(f"/executions/{running[0]['executionId']}/cancel")
        advance(0)
        assert api.get(f"/executions/{queued_id}").json()["status"] in ("starting", "running")
