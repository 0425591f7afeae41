"""End to end against the in-process service: apply, plan is empty; change the
files, the plan shows exactly the change; apply; empty again."""

from __future__ import annotations

from pathlib import Path

from tests.provisioner.harness import Service, write_workspace

POOLS = """\
profilePools:
  - name: checkout-{{ vars.region }}
    selectionStrategy: least_recently_used
    allowConcurrentUse: false
    members: [bot-1, bot-2]
"""
GROUPS = """\
profileGroups:
  - name: eu-profiles
    members: [bot-1, bot-3]
"""
TEMPLATES = """\
vaultTemplates:
  - name: Shop login
    kind: login
    fields:
      - {type: username, label: Username, required: true}
      - {type: password, label: Password, required: true}
    steps:
      - {key: sign-in, title: Sign in, fieldKeys: [USERNAME, PASSWORD]}
"""
ROOT = "workspace: e2e\nendpoint: local\nvars: {region: eu}\n"


def converge(service: Service, ws: Path) -> None:
    plan = service.plan(ws)
    assert plan.has_changes
    assert service.apply(ws, plan).ok
    assert not service.plan(ws).has_changes


def test_pools(service: Service, ws: Path) -> None:
    write_workspace(ws, {"agentform.yaml": ROOT, "pools.yaml": POOLS})
    converge(service, ws)
    (ws / "pools.yaml").write_text(POOLS.replace("[bot-1, bot-2]", "[bot-2, bot-4]"))
    plan = service.plan(ws)
    assert [(c.id, c.action, [f.field for f in c.changedFields]) for c in plan.changes] == [
        ("profilePools/checkout-eu", "update", ["members"])
    ]
    assert plan.changes[0].changedFields[0].added == ("bot-4",)
    assert plan.changes[0].changedFields[0].removed == ("bot-1",)
    converge(service, ws)


def test_groups(service: Service, ws: Path) -> None:
    write_workspace(ws, {"agentform.yaml": ROOT, "groups.yaml": GROUPS})
    converge(service, ws)
    (ws / "groups.yaml").write_text(GROUPS + "    selectionStrategy: most_recently_used\n")
    plan = service.plan(ws)
    assert [(c.action, c.reason) for c in plan.changes] == [
        ("update", "field selectionStrategy differs")
    ]
    assert plan.changes[0].calls[0].body == {"selectionStrategy": "most_recently_used"}
    converge(service, ws)


def test_templates(service: Service, ws: Path) -> None:
    write_workspace(ws, {"agentform.yaml": ROOT, "vault.yaml": TEMPLATES})
    converge(service, ws)
    (ws / "vault.yaml").write_text(
        TEMPLATES.replace("Password, required: true", "Password, required: false")
    )
    plan = service.plan(ws)
    (change,) = plan.changes
    assert change.action == "update" and [f.field for f in change.changedFields] == ["fields"]
    assert [c.method for c in change.calls] == ["PATCH"]
    assert set(change.calls[0].body) == {"fields"}
    converge(service, ws)


def test_mixed_workspace_with_vars_and_prune(service: Service, ws: Path) -> None:
    write_workspace(
        ws,
        {
            "agentform.yaml": ROOT + "prune: [profilePools]\n",
            "pools.yaml": POOLS,
            "nested/groups.yaml": GROUPS,
            "vault.yaml": TEMPLATES,
        },
    )
    converge(service, ws)
    # another region: the eu pool is pruned, the us pool created
    plan = service.plan(ws, cli_vars={"region": "us"})
    assert sorted((c.action, c.key) for c in plan.changes) == [
        ("create", "checkout-us"),
        ("delete", "checkout-eu"),
    ]
    assert service.apply(ws, plan).ok
    assert not service.plan(ws, cli_vars={"region": "us"}).has_changes
