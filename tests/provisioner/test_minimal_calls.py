"""Minimal calls, counted as the requests the service receives."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from agentform.api.client import ApiClient
from agentform.kinds.order import top_level_kinds
from tests.provisioner.harness import Service, write_workspace


def pools_yaml(n: int, members: int = 2) -> str:
    lines = ["profilePools:"]
    for i in range(n):
        names = ", ".join(f"bot-{(i + j) % 6 + 1}" for j in range(members))
        lines.append(f"  - {{name: pool-{i:04d}, allowConcurrentUse: false, members: [{names}]}}")
    return "\n".join(lines) + "\n"


def list_calls(service: Service, path: str) -> int:
    return sum(1 for m, p in service.log.calls if m == "GET" and p == path)


def test_unchanged_workspace_reads_minimally_and_writes_nothing(service: Service, ws: Path) -> None:
    n = 230
    write_workspace(ws, {"agentform.yaml": "workspace: calls\n", "pools.yaml": pools_yaml(n)})
    assert service.apply(ws).ok
    service.log.reset()
    plan = service.plan(ws)
    assert not plan.has_changes
    assert service.log.writes() == []
    assert list_calls(service, "/agent-profile-pools") == math.ceil(n / 100)
    member_reads = [p for m, p in service.log.calls if p.endswith("/members")]
    assert len(member_reads) == n and len(set(member_reads)) == n
    others = [k.collection for k in top_level_kinds() if k.name != "profilePools"]
    for collection in [*others, "/profiles"]:
        assert list_calls(service, collection) == 1
    expected = 1 + math.ceil(n / 100) + n + len(others) + 1  # context, pools, members, lists
    assert len(service.log.calls) == expected


def test_members_are_read_only_where_the_files_manage_them(service: Service, ws: Path) -> None:
    n = 120
    write_workspace(ws, {"agentform.yaml": "workspace: calls\n", "pools.yaml": pools_yaml(n)})
    assert service.apply(ws).ok
    # The same pools with no `members:` key (members left unmanaged), but two of them.
    lines = pools_yaml(n).splitlines()
    kept = (0, 1, 8)  # the header, pool-0000 and pool-0007
    unmanaged = [
        line if i in kept else line.split(", members:")[0] + "}" for i, line in enumerate(lines)
    ]
    (ws / "pools.yaml").write_text("\n".join(unmanaged) + "\n")
    service.log.reset()
    plan = service.plan(ws)
    assert not plan.has_changes
    member_reads = sorted(p for m, p in service.log.calls if p.endswith("/members"))
    ids = sorted(
        f"/agent-profile-pools/{_id(service, name)}/members" for name in ("pool-0000", "pool-0007")
    )
    assert member_reads == ids
    assert plan.reads["profilePools"] == ("pool-0000", "pool-0007")
    service.log.reset()
    (ws / "pools.yaml").write_text("\n".join(unmanaged[:1] + unmanaged[2:8]) + "\n")
    service.plan(ws)
    assert [p for m, p in service.log.calls if p.endswith("/members")] == []
    assert list_calls(service, "/profiles") == 0  # no member names to resolve either


def test_one_changed_field_is_one_patch(service: Service, ws: Path) -> None:
    write_workspace(ws, {"agentform.yaml": "workspace: calls\n", "pools.yaml": pools_yaml(20)})
    assert service.apply(ws).ok
    (ws / "pools.yaml").write_text(
        pools_yaml(20).replace(
            "{name: pool-0007, allowConcurrentUse: false",
            "{name: pool-0007, allowConcurrentUse: true",
        )
    )
    service.log.reset()
    assert service.apply(ws).ok
    assert service.log.writes() == [("PATCH", f"/agent-profile-pools/{_id(service, 'pool-0007')}")]


def test_member_change_is_at_most_one_add_and_one_remove(service: Service, ws: Path) -> None:
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: calls\n",
            "pools.yaml": "profilePools:\n  - {name: p, members: [bot-1, bot-2, bot-3]}\n"
            "profileGroups:\n  - {name: g, members: [bot-1]}\n",
        },
    )
    assert service.apply(ws).ok
    (ws / "pools.yaml").write_text(
        "profilePools:\n  - {name: p, members: [bot-3, bot-4, bot-5, bot-6]}\n"
        "profileGroups:\n  - {name: g, members: [bot-2]}\n"
    )
    service.log.reset()
    assert service.apply(ws).ok
    writes = sorted(service.log.writes())
    pool, group = _id(service, "p"), _id(service, "g", "/profile-groups")
    assert writes == sorted(
        [
            ("POST", f"/agent-profile-pools/{pool}/members"),
            ("DELETE", f"/agent-profile-pools/{pool}/members"),
            ("POST", f"/profile-groups/{group}/members"),
            ("DELETE", f"/profile-groups/{group}/members"),
        ]
    )
    assert not service.plan(ws).has_changes


def test_more_than_100_members_are_sent_in_chunks(service: Service, ws: Path) -> None:
    async def make_profiles(api: ApiClient) -> None:
        for i in range(150):
            await api.request("POST", "/profiles", json={"name": f"extra-{i:03d}"})

    service.run(make_profiles)
    names = ", ".join(f"extra-{i:03d}" for i in range(150))
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: calls\n",
            "pools.yaml": f"profilePools:\n  - {{name: big, members: [{names}]}}\n",
        },
    )
    plan = service.plan(ws)
    calls = plan.changes[0].calls
    assert [c.method for c in calls] == ["POST", "POST", "POST"]
    assert [len(c.body["profileIds"]) for c in calls[1:]] == [100, 50]
    assert service.apply(ws, plan).ok and not service.plan(ws).has_changes


def _id(service: Service, name: str, path: str = "/agent-profile-pools") -> str:
    async def go(api: ApiClient) -> Any:
        return {i["name"]: i["id"] for i in await api.list_all(path)}[name]

    return str(service.run(go))


def test_profiles_are_read_only_when_members_are_declared(service: Service, ws: Path) -> None:
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: calls\n",
            "pools.yaml": "profilePools:\n  - {name: p, allowConcurrentUse: true}\n",
        },
    )
    service.plan(ws)
    assert list_calls(service, "/profiles") == 0
    assert not [p for _, p in service.log.calls if p.endswith("/members")]
    (ws / "pools.yaml").write_text("profilePools:\n  - {name: p, members: [bot-1]}\n")
    service.log.reset()
    service.plan(ws)
    assert list_calls(service, "/profiles") == 1


def test_unchanged_webhooks_and_batches_read_each_list_once_and_write_nothing(
    service: Service, ws: Path
) -> None:
    """Webhooks and batches unchanged: each collection read once in pages of 100, one
    attachments read per managed integration, one items read per declared pending
    batch, the agents once; no other request, no write."""
    hooks, batches = 120, 140
    files = ["webhooks:"]
    for i in range(hooks):
        files.append(f"  - name: hook-{i:03d}")
        files.append(f"    url: https://hooks.example.com/{i}")
        files.append("    headers: {Authorization: \"Bearer {{ secret('TOKEN') }}\"}")
        files.append("    attachments: [{agent: checkout-agent, eventRules: [EXECUTION_FAILED]}]")
    files.append("batches:")
    for i in range(batches):
        files.append(f"  - name: batch-{i:03d}")
        files.append("    agent: support-agent")
        files.append("    startAt: 2030-01-01T00:00:00Z")
        files.append("    config: {type: timeBatching, batchSize: 10, batchInterval: 60}")
        files.append(f"    items: [{{inputs: {{n: '{i}'}}}}, {{}}]")
    write_workspace(ws, {"agentform.yaml": "workspace: calls\n", "all.yaml": "\n".join(files)})
    env = {"TOKEN": "calls-token"}
    assert service.apply(ws, environ=env).ok
    service.log.reset()
    plan = service.plan(ws, environ=env)
    assert not plan.has_changes
    assert service.log.writes() == []
    pages = {"/webhook-integrations": math.ceil(hooks / 100)}
    pages["/execution-batches"] = math.ceil(batches / 100)
    for collection, count in pages.items():
        assert list_calls(service, collection) == count
    attachments = [p for m, p in service.log.calls if p.endswith("/attachments")]
    assert len(attachments) == hooks == len(set(attachments))
    items = [p for m, p in service.log.calls if p.endswith("/items")]
    assert len(items) == batches == len(set(items))
    others = [
        k.collection
        for k in top_level_kinds()
        if k.collection not in ("/webhook-integrations", "/execution-batches")
    ]
    for collection in [*others, "/agents"]:
        assert list_calls(service, collection) == 1
    expected = 1 + sum(pages.values()) + hooks + batches + len(others) + 1  # context, agents
    assert len(service.log.calls) == expected, sorted(set(service.log.calls))
