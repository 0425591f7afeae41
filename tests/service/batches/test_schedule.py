"""The batch scheduler on the manual clock (docs/service/contract.md#execution-batches):
slices fall due every interval, capacity decides what is triggered, oldest first; pause
holds, resume releases, cancel ends; items whose execute would fail now fail and the
batch goes on; events."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import FastAPI

from tests.service.batches.support import (
    SCHED_KEY,
    WORKER_SECONDS,
    all_items,
    at,
    batch_body,
    batch_events,
    counts,
    create,
    drained,  # noqa: F401  (autouse)
    executions_of_batch,
    get,
    item_statuses_in_db,
    live_executions,
)
from tests.service.conftest import Api, assert_error

Advance = Callable[[float], None]
KEY = SCHED_KEY  # the organization of capacity 4


# (seconds after creation, (pending, awaiting, triggered, cancelled, failed), status)
# 25 items, 10 every 60 s from t=60, capacity 4, each execution runs 90 s.
SCRIPTED = [
    (0, (25, 0, 0, 0, 0), "pending"),
    (59, (25, 0, 0, 0, 0), "pending"),
    (60, (15, 6, 4, 0, 0), "running"),  # 10 due, 4 slots
    (119, (15, 6, 4, 0, 0), "running"),
    (120, (5, 16, 4, 0, 0), "running"),  # 10 more due, still 4 running
    (150, (5, 12, 8, 0, 0), "running"),  # the first 4 end at 60+90: 4 more start
    (180, (0, 17, 8, 0, 0), "running"),  # the last 5 fall due
    (240, (0, 13, 12, 0, 0), "running"),
    (330, (0, 9, 16, 0, 0), "running"),
    (420, (0, 5, 20, 0, 0), "running"),
    (510, (0, 1, 24, 0, 0), "running"),
    (599, (0, 1, 24, 0, 0), "running"),
    (600, (0, 0, 25, 0, 0), "completed"),  # the last one starts: nothing left to trigger
]


def test_the_counters_after_every_step_of_a_scripted_schedule(
    app: FastAPI, api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    body = batch_body(
        agents["worker"],
        "scripted",
        startAt=at(app, 60),
        items=[{"inputs": {"n": n}} for n in range(25)],
    )
    batch = create(api, body)
    elapsed = 0
    for moment, expected, status in SCRIPTED:
        advance(moment - elapsed)
        elapsed = moment
        seen = get(api, batch["id"])
        assert (counts(seen), seen["status"]) == (expected, status), f"at t={moment}"
        assert sum(counts(seen)) == seen["totalCount"] == 25
        assert live_executions(app, "scheduled") <= 4
    items = all_items(api, batch["id"])
    # Triggered in index order (oldest due first, then by index), each once.
    triggered = sorted(items, key=lambda i: (i["triggeredAt"], i["index"]))
    assert [i["index"] for i in triggered] == list(range(25))
    assert len({i["executionId"] for i in items}) == 25
    assert sorted(executions_of_batch(app, batch["id"])) == sorted(i["executionId"] for i in items)
    assert [e for e, _ in batch_events(app, batch["id"])] == ["BATCH_STARTED", "BATCH_COMPLETED"]


def test_a_start_in_the_past_starts_at_once_and_keeps_the_spacing(
    app: FastAPI, api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    one_a_minute = {"type": "timeBatching", "batchSize": 1, "batchInterval": 60}
    body = batch_body(
        agents["worker"], "past", startAt=at(app, -3600), config=one_a_minute, items=[{}] * 3
    )
    batch = create(api, body)
    assert (batch["status"], counts(batch)) == ("running", (2, 0, 1, 0, 0))
    assert batch["startAt"] == body["startAt"]  # as asked, though it ran from now
    assert batch_events(app, batch["id"]) == [
        ("BATCH_STARTED", {"batch_id": batch["id"], "batch_name": "past", "item_count": 3})
    ]
    advance(59)
    assert counts(get(api, batch["id"])) == (2, 0, 1, 0, 0)
    advance(1)
    assert counts(get(api, batch["id"])) == (1, 0, 2, 0, 0)


def test_a_batch_completes_when_every_item_is_triggered_not_when_executions_end(
    app: FastAPI, api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    batch = create(api, batch_body(agents["worker"], "ends", startAt=at(app, 0)))
    assert batch["status"] == "completed"
    assert live_executions(app, "scheduled") == 1
    assert batch_events(app, batch["id"])[-1] == (
        "BATCH_COMPLETED",
        {
            "batch_id": batch["id"],
            "batch_name": "ends",
            "item_count": 1,
            "triggered_count": 1,
            "cancelled_count": 0,
        },
    )


def test_pause_holds_due_items_stops_the_schedule_and_resume_goes_on_from_there(
    app: FastAPI, api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    body = batch_body(agents["worker"], "paused", startAt=at(app, 0), items=[{}] * 25)
    batch = create(api, body)  # 10 due now: 4 run, 6 wait
    bid = batch["id"]
    assert counts(batch) == (15, 6, 4, 0, 0)
    paused = api.post(f"/execution-batches/{bid}/pause").json()
    assert (paused["status"], counts(paused)) == ("paused", (21, 0, 4, 0, 0))
    assert item_statuses_in_db(app, bid) == {"pending": 15, "batch_paused": 6, "triggered": 4}
    advance(600)  # executions end, capacity frees, slices would have come: nothing moves
    assert counts(get(api, bid)) == (21, 0, 4, 0, 0)
    assert live_executions(app, "scheduled") == 0
    resumed = api.post(f"/execution-batches/{bid}/resume").json()
    # The held 6 are released first (4 start); the next slice comes 60 s after the
    # resume, as it was 60 s away when paused (the pause stopped the schedule).
    assert (resumed["status"], counts(resumed)) == ("running", (15, 2, 8, 0, 0))
    advance(59)
    assert counts(get(api, bid)) == (15, 2, 8, 0, 0)
    advance(1)
    assert counts(get(api, bid)) == (5, 12, 8, 0, 0)
    events = [e for e, _ in batch_events(app, bid)]
    assert events == ["BATCH_STARTED"]  # not again on resume


def test_a_batch_paused_before_its_start_waits_for_its_start_or_starts_at_resume(
    app: FastAPI, api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    early = create(api, batch_body(agents["instant"], "early", startAt=at(app, 120)))
    late = create(api, batch_body(agents["instant"], "late", startAt=at(app, 120)))
    for batch in (early, late):
        assert api.post(f"/execution-batches/{batch['id']}/pause").json()["status"] == "paused"
    advance(60)
    resumed = api.post(f"/execution-batches/{early['id']}/resume").json()
    assert resumed["status"] == "pending"  # its start is still ahead
    advance(60)
    assert get(api, early["id"])["status"] == "completed"
    assert get(api, late["id"])["status"] == "paused"
    advance(60)
    resumed = api.post(f"/execution-batches/{late['id']}/resume").json()
    assert (resumed["status"], counts(resumed)) == ("completed", (0, 0, 1, 0, 0))
    assert [e for e, _ in batch_events(app, late["id"])] == ["BATCH_STARTED", "BATCH_COMPLETED"]


def test_cancel_ends_every_item_not_triggered_and_started_executions_run_on(
    app: FastAPI, api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    batch = create(
        api, batch_body(agents["worker"], "cancelled", startAt=at(app, 0), items=[{}] * 25)
    )
    bid = batch["id"]
    api.post(f"/execution-batches/{bid}/pause")
    cancelled = api.post(f"/execution-batches/{bid}/cancel").json()
    assert (cancelled["status"], counts(cancelled)) == ("cancelled", (0, 0, 4, 21, 0))
    assert item_statuses_in_db(app, bid) == {"triggered": 4, "cancelled": 21}
    assert live_executions(app, "scheduled") == 4
    advance(WORKER_SECONDS)
    statuses = {api.get(f"/executions/{e}").json()["status"] for e in executions_of_batch(app, bid)}
    assert statuses == {"completed"}
    assert counts(get(api, bid)) == (0, 0, 4, 21, 0)
    assert [e for e, _ in batch_events(app, bid)] == ["BATCH_STARTED"]  # no BATCH_COMPLETED


def test_batches_of_one_group_share_capacity_oldest_due_first(
    app: FastAPI, api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    first = create(api, batch_body(agents["worker"], "g-1", startAt=at(app, 0), items=[{}] * 6))
    group = first["concurrencyGroupId"]
    assert group == first["id"]  # the default: its own id
    second = create(
        api,
        batch_body(
            agents["worker"],
            "g-2",
            startAt=at(app, 0),
            items=[{}] * 6,
            concurrencyGroupId=group,
        ),
    )
    assert second["concurrencyGroupId"] == group
    assert counts(get(api, first["id"])) == (0, 2, 4, 0, 0)
    assert counts(second) == (0, 6, 0, 0, 0)  # the group is full
    advance(WORKER_SECONDS)  # 4 end: the first's 2 (older) go first, then 2 of the second
    assert counts(get(api, first["id"]))[:3] == (0, 0, 6)
    assert counts(get(api, second["id"])) == (0, 4, 2, 0, 0)
    assert get(api, first["id"])["status"] == "completed"


def pool_of(api: Api, name: str, *profiles: str) -> tuple[str, dict[str, list[str]]]:
    """A new pool with these profiles (by name): its id and its members body."""
    ids = api.ids("/profiles")
    pool = str(api.post("/agent-profile-pools", json={"name": name}).json()["id"])
    members = {"profileIds": [ids[p] for p in profiles]}
    assert api.post(f"/agent-profile-pools/{pool}/members", json=members).status_code == 204
    return pool, members


def test_an_item_whose_execute_would_fail_now_fails_and_the_batch_goes_on(
    app: FastAPI, api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    pool, members = pool_of(api, "emptied", "scheduled-p1")
    body = batch_body(
        agents["instant"],
        "emptied-pool",
        startAt=at(app, 60),
        items=[{}, {"agentProfilePoolId": pool}, {}],
    )
    batch = create(api, body)
    r = api.delete(f"/agent-profile-pools/{pool}/members", json=members)
    assert r.status_code == 204
    advance(60)
    seen = get(api, batch["id"])
    assert (seen["status"], counts(seen)) == ("completed", (0, 0, 2, 0, 1))
    failed = [i for i in all_items(api, batch["id"]) if i["status"] == "failed"]
    assert [i["index"] for i in failed] == [1]
    assert "no profiles" in failed[0]["failureReason"]
    assert "executionId" not in failed[0] and "triggeredAt" not in failed[0]


def test_an_item_whose_pool_is_busy_waits_for_its_profile(
    app: FastAPI, api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    pool, _ = pool_of(api, "one-profile", "scheduled-p2")
    items = [{"agentProfilePoolId": pool}, {"agentProfilePoolId": pool}, {}]
    batch = create(api, batch_body(agents["worker"], "busy", startAt=at(app, 0), items=items))
    # The first takes the pool's only profile; the second waits; the third (no pool) runs.
    assert counts(batch) == (0, 1, 2, 0, 0)
    waiting = [
        i["index"] for i in all_items(api, batch["id"]) if i["status"] == "awaiting_capacity"
    ]
    assert waiting == [1]
    advance(WORKER_SECONDS)
    assert (get(api, batch["id"])["status"], counts(get(api, batch["id"]))) == (
        "completed",
        (0, 0, 3, 0, 0),
    )


def test_a_pool_named_by_a_live_batch_cannot_be_deleted(
    app: FastAPI, api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    pool = api.post("/agent-profile-pools", json={"name": "needed"}).json()["id"]
    group = api.post("/profile-groups", json={"name": "unrelated"}).json()["id"]
    batch = create(
        api,
        batch_body(agents["instant"], "needs-pool", items=[{}, {"agentProfilePoolId": pool}]),
    )
    assert_error(api.delete(f"/agent-profile-pools/{pool}"), 409, "needs-pool")
    assert api.post(f"/execution-batches/{batch['id']}/pause").status_code == 200
    assert_error(api.delete(f"/agent-profile-pools/{pool}"), 409)
    assert api.delete(f"/profile-groups/{group}").status_code == 204  # not named by an item
    api.post(f"/execution-batches/{batch['id']}/cancel")
    assert api.delete(f"/agent-profile-pools/{pool}").status_code == 204


def test_a_pool_named_by_a_completed_batch_can_be_deleted(
    app: FastAPI, api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    pool = api.post(
        "/agent-profile-pools", json={"name": "shared-use", "allowConcurrentUse": True}
    ).json()["id"]
    batch = create(
        api,
        batch_body(
            agents["instant"], "used-pool", startAt=at(app, 0), items=[{"agentProfilePoolId": pool}]
        ),
    )
    assert batch["status"] == "completed"
    assert api.delete(f"/agent-profile-pools/{pool}").status_code == 204


def test_an_item_whose_version_was_removed_fails_with_the_reason(
    app: FastAPI, api: Api, advance: Advance, agents: dict[str, str]
) -> None:
    items = [{"version": 3}, {"version": 1}]
    batch = create(
        api, batch_body(agents["versioned"], "old-version", startAt=at(app, 60), items=items)
    )
    # Agents come from the seed file, which cannot take a version away once loaded;
    # the row is changed here as a newer agent definition would change it.
    with app.state.db.write() as conn:
        conn.execute("UPDATE agents SET versions = '[1, 2]' WHERE id = ?", (agents["versioned"],))
    advance(60)
    seen = get(api, batch["id"])
    assert (seen["status"], counts(seen)) == ("completed", (0, 0, 1, 0, 1))
    first = all_items(api, batch["id"])[0]
    assert first["status"] == "failed"
    assert first["failureReason"] == "version: the agent has no version 3 (versions: 1, 2)"
