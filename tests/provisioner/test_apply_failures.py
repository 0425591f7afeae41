"""Apply reports honestly: a failed change stops what depends on it, independent
work goes on, and a second apply converges."""

from __future__ import annotations

from pathlib import Path

from agentform.engine.model import Change, Plan, Summary
from agentform.kinds.base import ApiCall

from .harness import Service, write_workspace


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


def test_dependents_of_a_failed_change_are_not_attempted(service: Service) -> None:
    def change(cid: str, path: str, deps: list[str]) -> Change:
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

    plan = Plan(
        workspace="w",
        endpoint="t",
        organizationId="o",
        organizationName="o",
        changes=[
            change("profilePools/x", "/agent-profile-pools", []),
            change("profileGroups/y", "/profile-groups", ["profilePools/x"]),
            change("profileGroups/z", "/profile-groups", []),
        ],
        summary=Summary(),
        inputsDigest="",
        fingerprints={},
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
    assert report.to_json()["notAttempted"] == 1
    assert ("POST", "/profile-groups") in service.log.calls
