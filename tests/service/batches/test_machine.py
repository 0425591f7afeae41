"""A hypothesis state machine over the batch scheduler: random creates, pauses, resumes,
cancels and clock advances across two batches sharing a concurrency group, with the
invariants (docs/service/contract.md#execution-batches) checked after every step."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from agentform.rules.batch_statuses import ALL_BATCH_EDGES, BATCH_EDGES, FINAL_STATUSES
from tests.service.batches.support import (
    SCHED_KEY,
    WORKER_SECONDS,
    all_items,
    at,
    batch_body,
    batch_events,
    counts,
    executions_of_batch,
    get,
    item_statuses_in_db,
    live_executions,
)
from tests.service.conftest import Api, running
from tests.service.execution_support import check_active_counts
from tests.tiers import examples

pytestmark = pytest.mark.state_machine  # a hypothesis state machine

CAPACITY = 4  # the "scheduled" organization's
# What the clock alone may do to a batch: start it, complete it.
CLOCK_EDGES = BATCH_EDGES["start"] | BATCH_EDGES["complete"]


def _reachable(frm: str, to: str, edges: frozenset[tuple[str, str]]) -> bool:
    """`to` is `frm`, or at the end of a path of `edges` from it."""
    seen, frontier = {frm}, [frm]
    while frontier:
        here = frontier.pop()
        for a, b in edges:
            if a == here and b not in seen:
                seen.add(b)
                frontier.append(b)
    return to in seen


class BatchMachine(RuleBasedStateMachine):
    app: ClassVar[FastAPI]
    api: ClassVar[Api]
    advance: ClassVar[staticmethod[[float], None]]  # running()'s advance(seconds)
    agent: ClassVar[str]
    names: ClassVar[Iterator[int]] = itertools.count()

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[str] = []  # ids; the second shares the first's group
        self.status: dict[str, str] = {}
        self.executions: dict[tuple[str, int], str] = {}  # (batch, index) -> execution

    @initialize()
    def drained(self) -> None:
        # Earlier examples' executions end before this one starts.
        self.advance(10 * WORKER_SECONDS)

    @precondition(lambda self: len(self.batches) < 2)
    @rule(
        items=st.integers(1, 12),
        size=st.integers(1, 5),
        interval=st.sampled_from([10, 45, 60, 120]),
        start_in=st.sampled_from([-30, 0, 20, 90]),
    )
    def create(self, items: int, size: int, interval: int, start_in: int) -> None:
        config = {"type": "timeBatching", "batchSize": size, "batchInterval": interval}
        extra: dict[str, Any] = {}
        if self.batches:
            extra["concurrencyGroupId"] = self.batches[0]
        body = batch_body(
            self.agent,
            f"machine-{next(self.names)}",
            startAt=at(self.app, start_in),
            config=config,
            items=[{"inputs": {"i": i}} for i in range(items)],
            **extra,
        )
        r = self.api.post("/execution-batches", json=body)
        assert r.status_code == 201, r.text
        batch = r.json()
        self.batches.append(batch["id"])
        assert _reachable("pending", batch["status"], CLOCK_EDGES)
        self.status[batch["id"]] = batch["status"]

    def _act(self, index: int, action: str) -> None:
        batch_id = self.batches[index % len(self.batches)]
        before = self.status[batch_id]
        r = self.api.post(f"/execution-batches/{batch_id}/{action}")
        allowed = any(frm == before for frm, _ in BATCH_EDGES[action])  # type: ignore[index]
        assert r.status_code == (200 if allowed else 409), (before, action, r.text)
        if allowed:
            after = r.json()["status"]
            # The action's edge, then what the clock may do at once (a resume may start
            # and complete a batch whose held items all trigger).
            assert any(
                frm == before and _reachable(to, after, CLOCK_EDGES)
                for frm, to in BATCH_EDGES[action]  # type: ignore[index]
            ), (before, action, after)
            self.status[batch_id] = after

    # Pause and resume come often, cancel (which ends a batch's story) seldom.
    @precondition(lambda self: self.batches)
    @rule(
        index=st.integers(0, 1),
        action=st.sampled_from(["pause", "pause", "resume", "resume", "resume", "cancel"]),
    )
    def act(self, index: int, action: str) -> None:
        self._act(index, action)

    @rule(seconds=st.sampled_from([0, 1, 10, 30, 59, 60, 90, 150, 400]))
    def tick(self, seconds: int) -> None:
        self.advance(seconds)
        for batch_id in self.batches:
            after = get(self.api, batch_id)["status"]
            assert _reachable(self.status[batch_id], after, CLOCK_EDGES), (
                self.status[batch_id],
                after,
            )
            self.status[batch_id] = after

    @invariant()
    def counters_add_up_and_match_the_items(self) -> None:
        for batch_id in self.batches:
            batch = get(self.api, batch_id)
            pending, awaiting, triggered, cancelled, failed = counts(batch)
            assert sum(counts(batch)) == batch["totalCount"]
            truth = item_statuses_in_db(self.app, batch_id)
            assert pending == truth.get("pending", 0) + truth.get("batch_paused", 0)
            assert (awaiting, triggered, cancelled, failed) == tuple(
                truth.get(s, 0) for s in ("awaiting_capacity", "triggered", "cancelled", "failed")
            )
            status = batch["status"]
            assert status == self.status[batch_id]
            if status == "completed":
                assert pending == awaiting == cancelled == 0
            if status == "cancelled":
                assert pending == awaiting == 0
            if status != "paused":
                assert "batch_paused" not in truth
            if status == "pending":
                assert triggered == 0

    @invariant()
    def no_item_is_triggered_twice(self) -> None:
        for batch_id in self.batches:
            items = all_items(self.api, batch_id)
            for item in items:
                key = (batch_id, item["index"])
                if item["status"] == "triggered":
                    assert (
                        self.executions.setdefault(key, item["executionId"]) == item["executionId"]
                    )
                else:
                    assert key not in self.executions, item  # triggered is final
            started = executions_of_batch(self.app, batch_id)
            assert sorted(started) == sorted(
                self.executions[(batch_id, i["index"])] for i in items if i["status"] == "triggered"
            )

    @invariant()
    def never_more_executions_than_the_capacity(self) -> None:
        assert live_executions(self.app, "scheduled") <= CAPACITY

    @invariant()
    def the_kept_active_count_is_the_count(self) -> None:
        check_active_counts(self.app)

    @invariant()
    def events_follow_the_status(self) -> None:
        for batch_id in self.batches:
            names = [e for e, _ in batch_events(self.app, batch_id)]
            status = self.status[batch_id]
            assert names in (
                [],
                ["BATCH_STARTED"],
                ["BATCH_STARTED", "BATCH_COMPLETED"],
            )
            assert (names[-1:] == ["BATCH_COMPLETED"]) == (status == "completed")
            if status == "running" or status == "completed":
                assert names[:1] == ["BATCH_STARTED"]

    def teardown(self) -> None:
        for batch_id in self.batches:
            if self.status[batch_id] not in FINAL_STATUSES:
                self.api.post(f"/execution-batches/{batch_id}/cancel")


def test_the_batch_state_machine(app: FastAPI) -> None:
    assert ALL_BATCH_EDGES >= CLOCK_EDGES
    with running(app, SCHED_KEY) as (api, advance):
        BatchMachine.app = app
        BatchMachine.api = api
        BatchMachine.advance = staticmethod(advance)
        BatchMachine.agent = api.ids("/agents")["worker"]
        run_state_machine_as_test(
            BatchMachine,
            settings=settings(
                max_examples=examples(20),
                stateful_step_count=20,
                deadline=None,
                suppress_health_check=[HealthCheck.too_slow],
            ),
        )
