"""A property of the execution status machine (hypothesis): any interleaving of execute,
pause, resume, cancel, user messages and clock advances makes only allowed moves, a
terminal status is final, every API answer agrees with the status it met, capacity is
never exceeded, the events tell the same story as the statuses, and every event has
exactly one webhook delivery per attachment that wants it (and none for the others),
and the kept count of active executions is `count(*)` after every call.

The organization allows 2 executions at once, so executes are refused or queued too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentform.service.models.execution_status import (
    ACTIVE,
    CANCELLABLE,
    MESSAGEABLE,
    MOVES,
    PAUSABLE,
    RESUMABLE,
    TERMINAL,
)
from agentform.service.store import deliveries, events
from tests.service.conftest import Api
from tests.service.execution_support import (
    SMALL_KEY,
    check_active_counts,
    event_names,
    module_app,
    service,
)
from tests.tiers import examples
from tests.webhooks.receiver import running_receiver

CAPACITY = 2
Advance = Callable[[float], None]

EVENT_MOVES = {  # the status an event says the execution is now in
    "EXECUTION_STARTED": "running",
    "EXECUTION_PAUSED": "paused",
    "EXECUTION_RESUMED": "running",
    "EXECUTION_AWAITING_CONFIRMATION": "awaiting_confirmation",
    "EXECUTION_COMPLETED": "completed",
    "EXECUTION_FAILED": "failed",
    "EXECUTION_CANCELLED": "cancelled",
}


def reachable(start: str) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for nxt in MOVES[todo.pop()]:  # type: ignore[index]
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


REACHABLE: dict[str, set[str]] = {status: reachable(status) for status in MOVES}


app = module_app("properties")


@pytest.fixture(scope="module")
def svc(app: FastAPI) -> Iterator[tuple[Api, Advance, dict[str, str]]]:
    with service(app, SMALL_KEY) as (api, advance):
        yield api, advance, api.ids("/agents")


# Two attachments on every agent; which events each wants, said apart from the service.
HOOKS = {
    "pauses-and-cancels": (
        {"eventRules": ["EXECUTION_PAUSED", "EXECUTION_CANCELLED"]},
        lambda event: event.event in ("EXECUTION_PAUSED", "EXECUTION_CANCELLED"),
    ),
    "never": (
        {"eventRules": ["*"], "metadataFilter": {"team": "nobody-has-this"}},
        lambda event: False,
    ),
}


@pytest.fixture(scope="module")
def hooks(svc: tuple[Api, Advance, dict[str, str]]) -> Iterator[dict[str, Callable[..., bool]]]:
    """integration id -> whether an event is for it."""
    api, _, agents = svc
    with running_receiver() as rx:
        wants = {}
        for name, (settings_, wanted) in HOOKS.items():
            made = api.post("/webhook-integrations", json={"name": name, "url": rx.url})
            for agent in agents.values():
                api.request("PUT", f"/agents/{agent}/webhooks/{made.json()['id']}", json=settings_)
            wants[made.json()["id"]] = wanted
        yield wants


def check_one_delivery_per_attachment_that_wants_it(
    app: FastAPI, execution_id: str, wants: dict[str, Callable[..., bool]]
) -> None:
    with app.state.db.read() as conn:
        for event in events.list_events(conn, execution_id=execution_id):
            got = sorted(deliveries.deliveries_of_event(conn, event.id))
            assert got == sorted(i for i, wanted in wants.items() if wanted(event)), event


execute_op = st.tuples(
    st.just("execute"), st.sampled_from(["steady", "scripted", "plain"]), st.booleans()
)
call_op = st.tuples(
    st.sampled_from(["pause", "resume", "cancel", "message"]), st.integers(0, 7), st.none()
)
advance_op = st.tuples(st.just("advance"), st.sampled_from([0.0, 0.3, 0.5, 1.0, 2.5]), st.none())
# Every interleaving starts with an execution, so the calls after it have a target.
operations = st.lists(
    st.one_of(execute_op, call_op, call_op, advance_op, advance_op), min_size=3, max_size=30
).map(lambda ops: [("execute", "steady", False), *ops])

ALLOWED_FROM = {
    "pause": PAUSABLE,
    "resume": RESUMABLE,
    "cancel": CANCELLABLE,
    "message": MESSAGEABLE,
}


@dataclass
class Observed:
    statuses: dict[str, list[str]] = field(default_factory=dict)

    def look(self, api: Api) -> dict[str, str]:
        now = {}
        for execution_id, seen in self.statuses.items():
            status = api.get(f"/executions/{execution_id}").json()["status"]
            previous = seen[-1]
            assert status in REACHABLE[previous], f"{previous} -> {status}"
            if previous in TERMINAL:
                assert status == previous, f"terminal {previous} left for {status}"
            if status != previous:
                seen.append(status)
            now[execution_id] = status
        active = sum(1 for s in now.values() if s in ACTIVE)
        assert active <= CAPACITY, now
        return now


@settings(
    max_examples=examples(60),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=operations)
def test_any_interleaving_keeps_the_status_machine(
    app: FastAPI,
    svc: tuple[Api, Advance, dict[str, str]],
    hooks: dict[str, Callable[..., bool]],
    ops: list[tuple[str, object, object]],
) -> None:
    api, advance, agents = svc
    observed = Observed()
    try:
        for kind, arg, queue in ops:
            check_active_counts(app)  # after every call: each commit keeps the count exact
            now = observed.look(api)
            if kind == "execute":
                body = {"onCapacityLimit": "queue"} if queue else {}
                r = api.post(f"/agents/{agents[str(arg)]}/execute", json=body)
                full = sum(1 for s in now.values() if s in ACTIVE) >= CAPACITY
                if full and not queue:
                    assert r.status_code == 409, r.text
                    continue
                assert r.status_code == 202, r.text
                expected = "queued" if full else "starting"
                assert r.json()["status"] == expected
                observed.statuses[r.json()["executionId"]] = [expected]
            elif kind == "advance":
                advance(float(arg))  # type: ignore[arg-type]
            elif observed.statuses:
                ids = list(observed.statuses)
                target = ids[int(arg) % len(ids)]  # type: ignore[call-overload]
                path = "user-messages" if kind == "message" else kind
                sent = {"message": "hello"} if kind == "message" else None
                r = api.post(f"/executions/{target}/{path}", json=sent)
                allowed = now[target] in ALLOWED_FROM[kind]
                assert r.status_code == ((202 if kind == "message" else 200) if allowed else 409), (
                    kind,
                    now[target],
                    r.text,
                )
        final = observed.look(api)
        check_active_counts(app)
        for execution_id, status in final.items():
            check_events_tell_the_same_story(app, execution_id, status)
            check_one_delivery_per_attachment_that_wants_it(app, execution_id, hooks)
    finally:
        for execution_id in observed.statuses:  # free the capacity for the next example
            api.post(f"/executions/{execution_id}/cancel")


def check_events_tell_the_same_story(app: FastAPI, execution_id: str, status: str) -> None:
    """Replays the execution's events as status moves: each allowed, none after the end,
    work events only while running, and the replay ends where the execution is."""
    names = event_names(app, execution_id)
    replayed = "created"  # queued or starting: neither has an event
    for name in names:
        assert replayed not in TERMINAL, f"{name} after the end: {names}"
        moved = EVENT_MOVES.get(name)
        if name == "USER_MESSAGE_RECEIVED":
            continue  # any status short of the end takes a message
        if moved is None:
            assert replayed == "running", (name, names)
            continue
        sources = ("queued", "starting") if replayed == "created" else (replayed,)
        assert any(moved in MOVES[s] for s in sources), (replayed, name, names)  # type: ignore[index]
        replayed = moved
    assert names.count("EXECUTION_STARTED") <= 1
    expected = "created" if status in ("queued", "starting") else status
    assert replayed == expected, (status, names)
