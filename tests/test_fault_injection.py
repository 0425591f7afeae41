"""Fault injection (issue 10): apply through a proxy that answers 429 and 503,
drops connections before and after forwarding, and holds requests past the
client's timeout, with a fixed seed. A workspace of pools and groups with
members and templates converges within two applies, with no duplicate, no
member lost, no wrong delete, and every "failed" in a report a real failure."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentform.api.client import ApiClient
from agentform.api.retries import RetryPolicy
from agentform.config.loader import Workspace, load_workspace
from agentform.engine.apply import ApplyReport, apply_plan
from agentform.engine.planner import make_plan
from agentform.output.json_view import report_document
from agentform.service import DEMO_ADMIN_KEY, create_app
from tests.fault_matrix import run_seed
from tests.fault_proxy import FaultProxy, TimesOutWhenHeld, fault_proxy
from tests.loopback import serving
from tests.provisioner.harness import write_workspace

pytestmark = pytest.mark.fault_matrix  # apply through the fault-injecting proxy

# Fixed: the same faults hit the same requests on every run (FAULT_SEED=N tries
# another). This one makes the first apply fail for good on a few changes, so
# the honesty of its report is judged, and the second apply converge.
SEED = int(os.environ.get("FAULT_SEED", "7"))
# Faults of writes: high enough that some calls fail for good on the first apply
# (4 attempts each); reads get a third of them, so planning gets through.
RATES = {
    "429": 0.14,
    "503": 0.14,
    "drop-before": 0.08,
    "drop-after": 0.12,
    "hold-before": 0.03,
    "hold-after": 0.04,
}
READS = 0.35
ATTEMPTS = 4
CLIENT_TIMEOUT = 1.0  # held requests cost this much: kept small, and few are held
BOTS = [f"bot-{i}" for i in range(1, 7)]


def members(i: int) -> list[str]:
    return [BOTS[(i + k) % 6] for k in range(1 + i % 3)]


FILES = {
    "agentform.yaml": "workspace: faults\n"
    "prune: [profileGroups]\n"
    "protect:\n  profileGroups: ['keep-*']\n",
    "pools.yaml": "profilePools:\n"
    + "".join(
        f"  - {{name: pool-{i}, allowConcurrentUse: {str(i % 2 == 0).lower()}, "
        f"members: [{', '.join(members(i))}]}}\n"
        for i in range(10)
    )
    + "  - {name: gone-pool, ensure: absent}\n",
    "groups.yaml": "profileGroups:\n"
    + "".join(
        f"  - {{name: group-{i}, members: [{', '.join(members(i + 3))}]}}\n" for i in range(6)
    ),
    "vault.yaml": "vaultTemplates:\n"
    + "".join(
        f"  - name: Template {i}\n    kind: login\n    description: number {i}\n"
        "    fields:\n"
        "      - {type: username, label: User, required: true}\n"
        "      - {type: password, label: Password, required: true, hint: a hint}\n"
        "    steps:\n"
        "      - {key: sign-in, title: Sign in, fieldKeys: [USER, PASSWORD]}\n"
        for i in range(4)
    ),
}

# Live before the first apply: what must change, what must be deleted, and what
# must be left alone (an undeclared pool and a protected group, with members).
LIVE: dict[str, list[tuple[dict[str, Any], list[str]]]] = {
    "/agent-profile-pools": [
        ({"name": "pool-0", "selectionStrategy": "most_recently_used"}, ["bot-5", "bot-6"]),
        ({"name": "gone-pool"}, ["bot-1"]),
        ({"name": "unmanaged-pool"}, ["bot-1", "bot-2"]),
    ],
    "/profile-groups": [
        ({"name": "keep-this"}, ["bot-3", "bot-4"]),
        ({"name": "stale-1"}, ["bot-1"]),
        ({"name": "stale-2"}, []),
    ],
    "/vault/templates": [
        (
            {
                "name": "Template 0",
                "kind": "custom",
                "fields": [{"type": "text", "label": "User", "required": False}],
            },
            [],
        )
    ],
}


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serving(create_app(tmp_path_factory.mktemp("svc") / "service.db")) as origin:
        yield origin


async def _no_wait(_: float) -> None:
    await asyncio.sleep(0)


def client(origin: str) -> ApiClient:
    api = ApiClient(
        f"{origin}/agents/v2",
        DEMO_ADMIN_KEY,
        retry=RetryPolicy(attempts=ATTEMPTS, base_delay=0.001, max_delay=0.01),
        sleep=_no_wait,
    )
    api.sender.extensions = {"timeout": httpx.Timeout(CLIENT_TIMEOUT).as_dict()}
    return api


def run(origin: str, fn: Any) -> Any:
    async def go() -> Any:
        async with client(origin) as api:
            return await fn(api)

    return asyncio.run(go())


def seed_live(origin: str) -> None:
    async def go(api: ApiClient) -> None:
        profiles = {p["name"]: p["id"] for p in await api.list_all("/profiles")}
        for collection, items in LIVE.items():
            for body, names in items:
                created = await api.request("POST", collection, json=body)
                if names:
                    await api.request(
                        "POST",
                        f"{collection}/{created['id']}/members",
                        json={"profileIds": [profiles[n] for n in names]},
                        idempotent=True,
                    )

    run(origin, go)


def snapshot(origin: str) -> dict[str, dict[str, Any]]:
    """collection -> name -> (the object, its member names), read directly."""

    async def go(api: ApiClient) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for collection in LIVE:
            items = await api.list_all(collection)
            names = [i["name"] for i in items]
            assert len(names) == len(set(names)), f"duplicates in {collection}: {names}"
            out[collection] = {}
            for item in items:
                found = None
                if collection != "/vault/templates":
                    found = sorted(
                        m["name"] for m in await api.list_all(f"{collection}/{item['id']}/members")
                    )
                out[collection][item["name"]] = (item, found)
        return out

    return run(origin, go)  # type: ignore[no-any-return]


def apply_through(proxy: FaultProxy, workspace: Workspace) -> ApplyReport:
    async def go(api: ApiClient) -> ApplyReport:
        return await apply_plan(await make_plan(workspace, api, "proxy"), api, parallelism=8)

    return run(proxy.url, go)  # type: ignore[no-any-return]


def still_needed(origin: str, workspace: Workspace) -> set[str]:
    """The changes a plan made now, directly (no faults), would make."""
    plan = run(origin, lambda api: make_plan(workspace, api, "direct"))
    return {c.id for c in plan.changes}


@pytest.mark.slow
def test_apply_through_faults_converges_and_reports_honestly(service: str, tmp_path: Path) -> None:
    seed_live(service)
    ws = write_workspace(tmp_path / "ws", FILES)
    workspace = load_workspace(ws)
    expected = still_needed(service, workspace)
    assert len(expected) == 23  # 10+4 pool/template creates or updates, 6 groups, 3 deletes

    reports = []
    with fault_proxy(service, SEED, RATES, READS) as proxy:
        for _ in range(2):
            report = apply_through(proxy, workspace)
            reports.append(report)
            needed = still_needed(service, workspace)
            done = {r.change.id for r in report.results if r.status != "failed"}
            done -= {r.change.id for r in report.results if r.status == "not attempted"}
            failed = {r.change.id for r in report.results if r.status == "failed"}
            assert failed <= needed, f"reported failed, but done: {failed - needed}"
            assert not (done & needed), f"reported done, but not done: {done & needed}"
            if not needed:
                break
        injected = dict(proxy.injected)

    assert not still_needed(service, workspace), [report_document(r, "w") for r in reports]
    assert reports[0].count("failed") > 0 or "FAULT_SEED" in os.environ  # judged above
    assert all(injected.get(f) for f in RATES), injected  # every kind of fault happened
    live = snapshot(service)
    pools, groups = live["/agent-profile-pools"], live["/profile-groups"]
    assert sorted(pools) == sorted([f"pool-{i}" for i in range(10)] + ["unmanaged-pool"])
    for i in range(10):
        assert pools[f"pool-{i}"][1] == sorted(members(i))
    assert pools["unmanaged-pool"][1] == ["bot-1", "bot-2"]  # not declared, not pruned
    assert sorted(groups) == sorted([f"group-{i}" for i in range(6)] + ["keep-this"])
    assert groups["keep-this"][1] == ["bot-3", "bot-4"]  # protected from prune
    for i in range(6):
        assert groups[f"group-{i}"][1] == sorted(members(i + 3))
    templates = live["/vault/templates"]
    assert all(templates[f"Template {i}"][0]["description"] == f"number {i}" for i in range(4))


@pytest.mark.parametrize("fault", ["hold-before", "hold-after"])
def test_a_hold_answered_at_once_is_the_timeout_a_real_hold_ends_in(
    service: str, fault: str
) -> None:
    """The matrix below holds requests with held="answered": the client's transport
    raises at once what its own timeout raises after a real hold, and the request
    landed exactly when the proxy forwarded it."""
    seen: dict[str, type[BaseException]] = {}
    for held in ("until-timeout", "answered"):
        name = f"{fault}-{held}"
        with fault_proxy(service, SEED, {fault: 1.0}, held=held) as proxy:
            api = client(proxy.url)
            api.sender.extensions = {"timeout": httpx.Timeout(0.5).as_dict()}
            api.sender.transport = TimesOutWhenHeld(api.sender.transport)

            async def post(api: ApiClient = api, name: str = name) -> None:
                async with api:
                    await api.sender.send("POST", "/profile-groups", json={"name": name})

            with pytest.raises(httpx.TimeoutException) as raised:
                asyncio.run(post())
            seen[held] = raised.type
        landed = {g["name"] for g in run(service, lambda api: api.list_all("/profile-groups"))}
        if held == "answered" or fault == "hold-before":  # a real hold-after lands meanwhile
            assert (name in landed) == (fault == "hold-after"), (name, landed)
    assert seen == {"until-timeout": httpx.ReadTimeout, "answered": httpx.ReadTimeout}


# The matrix (issue 20): ~160 changes of all five kinds, one apply through the
# issue's fault rates per seed. Two seeds run by default (both failed before the
# write path read back its cancels); the rest are `slow` (about 13 s each).
MATRIX_DEFAULT = (0, 4)


@pytest.mark.parametrize(
    "seed",
    [pytest.param(s, marks=() if s in MATRIX_DEFAULT else pytest.mark.slow) for s in range(12)],
)
def test_one_apply_through_faults_converges_and_reports_honestly(seed: int, tmp_path: Path) -> None:
    outcome = run_seed(seed, tmp_path)
    assert outcome.changes > 150
    assert outcome.landed_reported_failed == [], outcome.failures
    assert outcome.reported_done_not_done == []
    assert outcome.converged, outcome.failures
    assert outcome.exit_code == 0
