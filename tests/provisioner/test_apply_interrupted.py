"""An interrupted apply (Ctrl-C, SIGTERM): no new change starts, the changes under
way finish whole (a pool gets its members), and the report says what was done; a
second interruption cancels what is under way. In-process, through the same
`ApplyStop` the CLI's signal handler uses."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentform.api.client import ApiClient
from agentform.engine.apply import INTERRUPTED, ApplyReport, ApplyStop, ChangeResult, apply_plan
from agentform.engine.model import Change
from agentform.engine.planner import make_plan
from tests.provisioner.harness import Service, load, write_workspace

POOLS = "profilePools:\n" + "".join(
    f"  - {{name: p{i}, members: [bot-1, bot-2]}}\n" for i in range(6)
)


class StopOnStart:
    """Hooks that interrupt the apply when the `at`-th change starts."""

    def __init__(self, stop: ApplyStop, at: int, abort: bool = False) -> None:
        self.stop, self.at, self.abort = stop, at, abort
        self.started_ids: list[str] = []

    def started(self, change: Change) -> None:
        self.started_ids.append(change.id)
        if len(self.started_ids) == self.at:
            self.stop.soon()
            if self.abort:
                self.stop.now()

    def finished(self, result: ChangeResult) -> None:
        pass


def interrupted_apply(
    service: Service, ws: Path, at: int, abort: bool = False, requests: int = 16
) -> tuple[ApplyReport, StopOnStart]:
    """`requests`: the client's ceiling of requests in flight."""
    write_workspace(ws, {"agentform.yaml": "workspace: i\n", "pools.yaml": POOLS})
    workspace = load(ws)
    stop = ApplyStop()
    hooks = StopOnStart(stop, at, abort)

    async def go(api: ApiClient) -> ApplyReport:
        plan = await make_plan(workspace, api, "test")
        return await apply_plan(plan, api, parallelism=1, hooks=hooks, stop=stop)

    async def with_client() -> ApplyReport:
        async with service.client(concurrency=requests) as api:
            return await go(api)

    return asyncio.run(with_client()), hooks


def test_changes_under_way_finish_and_no_new_one_starts(service: Service, ws: Path) -> None:
    report, hooks = interrupted_apply(service, ws, at=2)
    status = {r.change.id: r.status for r in report.results}
    assert report.interrupted and not report.ok
    assert {status[c] for c in hooks.started_ids} == {"succeeded"}  # finished whole
    left = [c for c, s in status.items() if c not in hooks.started_ids]
    assert left and {status[c] for c in left} == {"not attempted"}
    assert all("interrupted" in (r.error or "") for r in report.results if r.change.id in left)
    after = service.plan(ws)  # nothing half-done: only the untouched pools remain to create
    assert sorted(c.id for c in after.changes) == sorted(left)
    assert {c.action for c in after.changes} == {"create"}


def test_a_change_whose_first_request_has_not_gone_out_is_not_waited_for(
    service: Service, ws: Path
) -> None:
    """Ctrl-C during a slow apply (a rate limit, a busy service): a change waiting for
    a request slot has done nothing yet, so it is left for the next apply instead of
    being waited for; only a change whose request went out is under way."""
    report, hooks = interrupted_apply(service, ws, at=2, requests=1)
    status = {r.change.id: r.status for r in report.results}
    sent, waiting = hooks.started_ids  # the second waits for the first's request slot
    assert status[sent] == "succeeded"
    assert status[waiting] == "not attempted", report.results
    assert next(r for r in report.results if r.change.id == waiting).error == INTERRUPTED
    after = service.plan(ws)
    assert waiting in {c.id for c in after.changes} and sent not in {c.id for c in after.changes}


def test_a_second_interruption_cancels_the_changes_under_way(service: Service, ws: Path) -> None:
    report, hooks = interrupted_apply(service, ws, at=1, abort=True)
    status = {r.change.id: r.status for r in report.results}
    assert report.interrupted
    assert {status[c] for c in hooks.started_ids} == {"failed"}
    assert all("interrupted" in (r.error or "") for r in report.results if r.status == "failed")
    assert set(status.values()) == {"failed", "not attempted"}
    again = service.apply(ws)  # the next apply converges
    assert again.ok and not service.plan(ws).has_changes
