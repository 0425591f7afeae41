"""A completed batch is history (issue 18): files that differ from it are not a
change and not drift, and the plan says a new run needs a new name; a cancelled
batch still never matches, so its name makes a new batch."""

from __future__ import annotations

import json
from pathlib import Path

from agentform.engine.drift import drift_of
from agentform.kinds.context import PlanOptions
from tests.provisioner.harness import Service, write_workspace

LIVE = {
    "name": "nightly",
    "agent": "support-agent",
    "startAt": "2026-01-01T00:00:00Z",
    "config": {"type": "timeBatching", "batchSize": 5, "batchInterval": 60},
    "items": [{"inputs": {"n": "1"}}],
}
DECLARED = (
    "workspace: w\nbatches:\n  - name: nightly\n    agent: support-agent\n"
    "    startAt: 2026-01-01T00:00:00Z\n"
    "    config: {type: timeBatching, batchSize: 5, batchInterval: 60}\n"
    "    items: [{inputs: {n: '1'}}, {inputs: {n: '2'}}]\n"
)


def test_a_completed_batch_that_differs_is_no_change_and_no_drift(
    service: Service, ws: Path
) -> None:
    service.seed_live({"batches": [dict(LIVE)]})
    (batch,) = service.run(lambda api: api.list_all("/execution-batches"))
    assert batch["status"] == "completed"
    write_workspace(ws, {"agentform.yaml": DECLARED})
    plan = service.plan(ws, PlanOptions(allow_past_start=True))
    assert not plan.has_changes and plan.cannotApply == ()
    assert drift_of(plan).items == ()
    (warning,) = plan.warnings
    assert "completed, so it is history" in warning.message
    assert "a new run needs a new name (e.g. name: nightly-{{ vars.run_date }}" in warning.message
    assert warning.position == "agentform.yaml:3:5"


def test_a_cancelled_batch_never_matches(service: Service, ws: Path) -> None:
    future = "2030-01-01T00:00:00Z"  # pending until cancelled
    service.seed_live({"batches": [{**LIVE, "startAt": future, "status": "cancelled"}]})
    write_workspace(ws, {"agentform.yaml": DECLARED.replace("2026-01-01", "2030-01-01")})
    plan = service.plan(ws, PlanOptions(allow_past_start=True))
    assert [(c.action, c.key) for c in plan.changes] == [("create", "support-agent/nightly")]
    assert json.loads(plan.model_dump_json())["warnings"] == []
