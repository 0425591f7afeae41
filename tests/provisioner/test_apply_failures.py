"""Apply reports honestly: a failed change stops what depends on it, independent
work goes on, and a second apply converges."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentform.api.client import ApiClient
from agentform.engine.model import Change, Plan, Summary
from agentform.kinds.model import ApiCall
from tests.provisioner.harness import Service, write_workspace


def test_failure_is_reported_and_independent_work_goes_on(service: Service, ws: Path) -> None:
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: f\n",
            "pools.yaml": "profilePools:\n  - {name: a, members: [bot-1]}\n  - {name: b}\n"
            "profileGroups:\n  - {name: g}\n",
        },
    )
    service.log.fail = lambda m, p: 500 if (m, p) == ("POST", "/profile-groups") else None
    report = service.apply(ws)
    assert not report.ok
    status = {r.change.id: r.status for r in report.results}
    assert status == {
        "profilePools/a": "succeeded",
        "profilePools/b": "succeeded",
        "profileGroups/g": "failed",
    }
    failed = next(r for r in report.results if r.status == "failed")
    assert "500" in (failed.error or "") and "/profile-groups" in (failed.error or "")
    service.log.fail = lambda m, p: None
    plan = service.plan(ws)
    assert [c.id for c in plan.changes] == ["profileGroups/g"]
    assert service.apply(ws, plan).ok
    assert not service.plan(ws).has_changes


def create(cid: str, path: str, deps: tuple[str, ...] = ()) -> Change:
    """A one-call create of `cid` ("kind/name") by POST to `path`."""
    kind, key = cid.split("/")
    return Change(
        id=cid,
        kind=kind,
        key=key,
        action="create",
        reason="test",
        calls=[ApiCall(method="POST", path=path, body={"name": key})],
        dependsOn=deps,
    )


def plan_of(*changes: Change) -> Plan:
    return Plan(
        workspace="w",
        endpoint="t",
        organizationId="o",
        organizationName="o",
        changes=changes,
        summary=Summary(),
        inputsDigest="",
        fingerprints={},
    )


def test_dependents_of_a_failed_change_are_not_attempted(service: Service) -> None:
    plan = plan_of(
        create("profilePools/x", "/agent-profile-pools"),
        create("profileGroups/y", "/profile-groups", ("profilePools/x",)),
        create("profileGroups/z", "/profile-groups"),
    )
    service.log.fail = lambda m, p: 500 if p == "/agent-profile-pools" else None

    from agentform.engine.apply import apply_plan

    report = service.run(lambda api: apply_plan(plan, api))
    status = {r.change.id: r.status for r in report.results}
    assert status == {
        "profilePools/x": "failed",
        "profileGroups/y": "not attempted",
        "profileGroups/z": "succeeded",
    }
    assert report.count("not attempted") == 1
    assert ("POST", "/profile-groups") in service.log.calls


def test_a_create_whose_answer_is_lost_is_adopted_not_repeated(service: Service, ws: Path) -> None:
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: f\n",
            "pools.yaml": "profilePools:\n  - {name: a, members: [bot-1, bot-2]}\n",
        },
    )
    lost: list[int] = []

    def lose_first_create(method: str, path: str) -> bool:
        if (method, path) == ("POST", "/agent-profile-pools") and not lost:
            lost.append(1)
            return True
        return False

    service.log.lose_answer = lose_first_create
    service.log.reset()
    report = service.apply(ws)
    assert report.ok, [(r.change.id, r.error) for r in report.results]
    creates = [c for c in service.log.calls if c == ("POST", "/agent-profile-pools")]
    assert creates == [("POST", "/agent-profile-pools")]  # looked up and adopted, not re-sent
    assert not service.plan(ws).has_changes  # one pool, with its members


def test_changes_follow_kind_dependencies_and_deletes_go_the_other_way(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No kind depends on another yet (batches will depend on pools); pretend groups do.
    from agentform.engine.apply import apply_plan
    from agentform.engine.order import stages
    from agentform.kinds import Kind

    monkeypatch.setattr(Kind.registry["profileGroups"], "depends_on", ("profilePools",))
    service.seed_live(
        {"profilePools": [{"name": "old-pool"}], "profileGroups": [{"name": "old-group"}]}
    )
    ids = _ids(service)

    def change(cid: str, action: str) -> Change:
        kind, key = cid.split("/")
        collection = Kind.registry[kind].collection
        if action == "delete":
            return Change(
                id=cid,
                kind=kind,
                key=key,
                action="delete",
                reason="t",
                liveId=ids[key],
                calls=[ApiCall(method="DELETE", path=f"{collection}/{ids[key]}")],
            )
        return Change(
            id=cid,
            kind=kind,
            key=key,
            action="create",
            reason="t",
            calls=[ApiCall(method="POST", path=collection, body={"name": key}, creates=True)],
        )

    changes = [
        change("profileGroups/new-group", "create"),
        change("profilePools/new-pool", "create"),
        change("profilePools/old-pool", "delete"),
        change("profileGroups/old-group", "delete"),
    ]
    assert [[c.id for c in stage] for stage in stages(changes)] == [
        ["profilePools/new-pool"],
        ["profileGroups/new-group"],
        ["profileGroups/old-group"],
        ["profilePools/old-pool"],
    ]
    plan = Plan(
        workspace="w",
        endpoint="t",
        organizationId="o",
        organizationName="o",
        changes=changes,
        summary=Summary(),
        inputsDigest="",
        fingerprints={},
    )
    service.log.reset()
    assert service.run(lambda api: apply_plan(plan, api, parallelism=8)).ok
    order = [c for c in service.log.calls if c[0] != "GET"]
    assert order.index(("POST", "/agent-profile-pools")) < order.index(("POST", "/profile-groups"))
    assert order.index(("DELETE", f"/profile-groups/{ids['old-group']}")) < order.index(
        ("DELETE", f"/agent-profile-pools/{ids['old-pool']}")
    )


def _ids(service: Service) -> dict[str, str]:
    async def go(api: ApiClient) -> dict[str, str]:
        items = await api.list_all("/agent-profile-pools") + await api.list_all("/profile-groups")
        return {i["name"]: i["id"] for i in items}

    return service.run(go)


def test_the_next_change_is_sent_before_a_finished_one_is_worked_on() -> None:
    """At parallelism 2, when the first two creates are answered together, the next
    two creates go out before either answer is worked on (recorded as finished): a
    batch of answers does not hold back the requests that follow it."""
    import asyncio

    import httpx

    from agentform.api.client import ApiClient
    from agentform.engine.apply import ChangeResult, apply_plan

    names = ["a", "b", "c", "d"]
    plan = plan_of(*(create(f"profilePools/{n}", "/agent-profile-pools") for n in names))
    events: list[str] = []

    class Hooks:
        def started(self, change: Change) -> None:
            pass

        def finished(self, result: ChangeResult) -> None:
            events.append(f"finished {result.change.key}")

    async def go() -> None:
        gate = asyncio.Event()

        class Gated(httpx.AsyncBaseTransport):
            async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
                name = json.loads(request.content)["name"]
                events.append(f"sent {name}")
                if name in ("a", "b"):
                    await gate.wait()  # the first two answers arrive together
                return httpx.Response(201, json={"id": f"id-{name}", "name": name})

        async with ApiClient("http://svc/agents/v2", "k", transport=Gated(), concurrency=2) as api:
            applying = asyncio.create_task(apply_plan(plan, api, parallelism=2, hooks=Hooks()))
            while len(events) < 2:
                await asyncio.sleep(0)
            gate.set()
            assert (await applying).ok

    asyncio.run(go())
    assert events.index("sent c") < events.index("finished a")
    assert events.index("sent d") < events.index("finished a")
    assert sorted(events) == sorted([f"{e} {n}" for e in ("sent", "finished") for n in names])
