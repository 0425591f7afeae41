"""Webhooks of real executions (docs/service/contract.md#webhook-delivery,
#webhook-integrations, #executions): a scripted execution's events reach the receiver
signed, in order, as the contract says; filters send exactly what they should; and, for
random interleavings of execute, pause, resume, cancel, user messages and clock
advances, every event has exactly one delivery per attachment that wants it. One app for
the module, on a manual clock."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentform.rules.signatures import verify
from agentform.rules.webhook_events import ATTACHABLE_EVENTS
from agentform.service import create_app
from agentform.service.runtime import ManualClock
from agentform.service.settings import ServiceSettings
from agentform.service.store import deliveries, events
from tests.service.conftest import Api
from tests.service.execution_support import EXEC_KEY, EXEC_SEED, execute, service, status_of
from tests.tiers import examples
from tests.webhooks.receiver import Receiver, running_receiver

PLATFORM = "https://platform.example/agents/v2"
Advance = Callable[[float], None]


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FastAPI]:
    path = tmp_path_factory.mktemp("webhook-executions") / "service.db"
    settings_ = ServiceSettings(platform_url=PLATFORM, webhook_test_wait_seconds=0)
    application = create_app(path, seed=EXEC_SEED, clock=ManualClock(), settings=settings_)
    yield application
    application.state.db.close()


@pytest.fixture(scope="module")
def svc(app: FastAPI) -> Iterator[tuple[Api, Advance]]:
    with service(app, EXEC_KEY) as running:
        yield running


@pytest.fixture(scope="module")
def rx() -> Iterator[Receiver]:
    with running_receiver() as receiver:
        yield receiver


@pytest.fixture(scope="module")
def agents(svc: tuple[Api, Advance]) -> dict[str, str]:
    return svc[0].ids("/agents")


def attach(api: Api, agent: str, url: str, **settings: Any) -> str:
    made = api.post("/webhook-integrations", json={"name": f"h-{uuid.uuid4().hex[:8]}", "url": url})
    integration = str(made.json()["id"])
    put = api.request(
        "PUT", f"/agents/{agent}/webhooks/{integration}", json={"eventRules": ["*"], **settings}
    )
    assert put.status_code == 200, put.text
    return integration


def log_of(app: FastAPI, execution: str) -> list[events.Event]:
    with app.state.db.read() as conn:
        return events.list_events(conn, execution_id=execution)


def run_scripted(api: Api, advance: Advance, agent: str, **body: Any) -> str:
    """The `scripted` agent to its end: 2 s, a confirmation, 1 s more."""
    execution = execute(api, agent, **body)
    advance(0)
    advance(2)
    assert status_of(api, execution) == "awaiting_confirmation"
    api.post(f"/executions/{execution}/user-messages", json={"message": "yes"})
    advance(1)
    return execution


def test_a_scripted_executions_events_arrive_in_order_signed_and_as_the_seed_says(
    app: FastAPI, svc: tuple[Api, Advance], agents: dict[str, str], rx: Receiver
) -> None:
    api, advance = svc
    integration = attach(api, agents["scripted"], rx.url)
    rx.clear()
    metadata = {"team": "ops"}
    execution = run_scripted(
        api, advance, agents["scripted"], inputs={"order": "O-7"}, metadata=metadata
    )
    log = log_of(app, execution)
    assert log[-1].event == "EXECUTION_COMPLETED" and len(log) == 22
    received = rx.wait_for(len(log))
    advance(0)
    api.delete(f"/webhook-integrations/{integration}")
    public = api.get("/webhook-signing-key").json()["publicKeyPem"]
    assert [r.event for r in received] == [e.event for e in log]
    for got, event in zip(received, log, strict=True):
        assert verify(got.body, got.headers["X-Service-Signature"], public)
        body = got.json()
        assert body["type"] == "execution"
        assert body["timestamp"] == event.created_at
        assert body["info"] == {
            "event": event.event,
            "execution_id": execution,
            "execution_url": f"{PLATFORM}/executions/{execution}",
            "agent_id": agents["scripted"],
            "agent_name": "scripted",
            "metadata": metadata,
            "payload": event.payload,
        }


def test_filters_and_unwrap_on_a_real_execution(
    app: FastAPI, svc: tuple[Api, Advance], agents: dict[str, str], rx: Receiver
) -> None:
    api, advance = svc
    rules = {
        "eventRules": ["EXECUTION_ACTION_FAILED", "EXECUTION_COMPLETED"],
        "fieldFilters": [
            {
                "event": "EXECUTION_ACTION_FAILED",
                "path": "os_error.message",
                "op": "eq",
                "value": "ENOSPC",
            },
        ],
        "metadataFilter": {"team": "payments"},
        "unwrapResult": True,
    }
    integration = attach(api, agents["scripted"], rx.url, **rules)
    rx.clear()
    run_scripted(api, advance, agents["scripted"], inputs={"order": "skip"})  # no metadata
    wanted = run_scripted(
        api, advance, agents["scripted"], inputs={"order": "O-8"}, metadata={"team": "payments"}
    )
    failed, completed = rx.wait_for(2)
    advance(0)
    api.delete(f"/webhook-integrations/{integration}")
    assert len(rx.received) == 2
    assert failed.json()["info"]["execution_id"] == wanted
    assert failed.json()["info"]["payload"]["os_error"] == {"message": "ENOSPC"}
    assert completed.json() == {"order": "O-8"}  # payload.result alone


# -- the property: one delivery per event and attachment that wants it ------------------

# An oracle written apart from the service's rules, for the settings drawn below.
Settings = dict[str, Any]


def expected(settings: Settings, event: events.Event) -> bool:
    rules = settings["eventRules"]
    if rules != ["*"] and event.event not in rules:
        return False
    if any(event.metadata.get(k) != v for k, v in settings.get("metadataFilter", {}).items()):
        return False
    for rule in settings.get("fieldFilters", []):
        if rule["event"] == event.event:
            value = event.payload.get(rule["path"], None)
            if rule["op"] == "exists" and rule["path"] not in event.payload:
                return False
            if rule["op"] == "eq" and value != rule["value"]:
                return False
    return True


attachment_settings = st.fixed_dictionaries(
    {
        "eventRules": st.one_of(
            st.just(["*"]),
            st.lists(st.sampled_from(ATTACHABLE_EVENTS), min_size=1, max_size=6, unique=True),
        )
    },
    optional={
        "metadataFilter": st.sampled_from([{"team": "a"}, {"team": "b"}, {}]),
        "fieldFilters": st.sampled_from(
            [
                [
                    {
                        "event": "EXECUTION_MESSAGE_ADDED",
                        "path": "message",
                        "op": "eq",
                        "value": "step 2",
                    }
                ],
                [{"event": "EXECUTION_PAUSED", "path": "paused_by", "op": "exists"}],
            ]
        ),
    },
).map(lambda s: s if _filters_fit(s) else {**s, "eventRules": ["*"]})


def _filters_fit(settings: Settings) -> bool:
    rules = settings["eventRules"]
    return rules == ["*"] or all(f["event"] in rules for f in settings.get("fieldFilters", []))


operation = st.one_of(
    st.tuples(
        st.just("execute"),
        st.sampled_from(["scripted", "steady"]),
        st.sampled_from([{"team": "a"}, {"team": "b"}, {}]),
    ),
    st.tuples(st.sampled_from(["pause", "resume", "cancel", "user-messages"]), st.integers(0, 5)),
    st.tuples(st.just("advance"), st.sampled_from([0, 0.5, 1, 2.5])),
)


@settings(max_examples=examples(8), deadline=None, suppress_health_check=list(HealthCheck))
@given(
    chosen=st.lists(attachment_settings, min_size=1, max_size=3),
    operations=st.lists(operation, max_size=14),
)
def test_every_event_has_exactly_one_delivery_per_attachment_that_wants_it(
    app: FastAPI,
    svc: tuple[Api, Advance],
    agents: dict[str, str],
    rx: Receiver,
    chosen: list[Settings],
    operations: list[tuple[Any, ...]],
) -> None:
    api, advance = svc
    hooks = {attach(api, agents["scripted"], rx.url, **s): s for s in chosen}
    for integration, s in list(hooks.items()):  # the same settings on the second agent
        api.request("PUT", f"/agents/{agents['steady']}/webhooks/{integration}", json=s)
    try:
        started: list[str] = []
        for op in operations:
            if op[0] == "execute":
                started.append(execute(api, agents[op[1]], metadata=op[2]))
            elif op[0] == "advance":
                advance(op[1])
            elif started:
                body = {"message": "hi"} if op[0] == "user-messages" else None
                api.post(f"/executions/{started[op[1] % len(started)]}/{op[0]}", json=body)
        for execution in started:  # settle: nothing more is emitted for these
            api.post(f"/executions/{execution}/cancel")
        advance(0)
        with app.state.db.read() as conn:
            for execution in started:
                for event in events.list_events(conn, execution_id=execution):
                    got = sorted(deliveries.deliveries_of_event(conn, event.id))
                    want = sorted(i for i, s in hooks.items() if expected(s, event))
                    assert got == want, (event.event, event.payload, event.metadata)
                    # and each attachment's recorded decision says the same, with its delivery
                    decided = conn.execute(
                        "SELECT integration_id, wanted, delivery_id IS NOT NULL "
                        "FROM routing_decisions WHERE event_ref = ?",
                        (event.id,),
                    ).fetchall()
                    assert sorted(tuple(d) for d in decided) == sorted(
                        (i, int(expected(s, event)), expected(s, event)) for i, s in hooks.items()
                    )
    finally:  # also when an example fails, so shrinking starts clean
        for integration in hooks:
            api.delete(f"/webhook-integrations/{integration}")
        advance(0)
