"""Benchmark: the console on a big organization, beside the API's own list of the
same filter (docs/performance.md#console).

100,000 executions (5 agents, 8 statuses, 20 teams in metadata, a pool on one in
ten, spread over 30 days) and 1,000,000 webhook deliveries in one organization,
written straight into a fresh service database; one execution has 500 events, each
weighed by two webhook attachments. Then, in-process (so the times are the
server's: routing, the queries, rendering), each executions filter is asked of the
console (`/console/executions?...`, an HTML page) and of the API (`GET
/agents/v2/executions?...&sortDirection=desc`), cold (the list order cache emptied
first, as after any write) and warm, and the execution's page with its 500 events
beside the API's routing explanation. Prints p50 and p95 in ms, and the ratio.

Targets (issue 29): any executions filter < 200 ms p95; the 500-event page < 300 ms.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import tempfile
import time
import uuid
import warnings
from datetime import UTC, datetime, timedelta
from pathlib import Path

warnings.filterwarnings("ignore", "Using `httpx` with `starlette.testclient`")
from fastapi.testclient import TestClient  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from agentform.service import DEMO_ADMIN_KEY, DEMO_SEED, create_app  # noqa: E402
from agentform.service.store.database import OrderCache, iso  # noqa: E402
from agentform.service.store.migrations.m010_console_reads import BACKFILL  # noqa: E402
from agentform.service.store.organizations import find_key  # noqa: E402

EXECUTIONS, DELIVERIES, EVENTS = 100_000, 1_000_000, 500
STATUSES = ("completed",) * 5 + ("failed", "cancelled", "running")
START = datetime(2026, 1, 1, tzinfo=UTC)
ROUNDS = 20
WALL: list[float] = []  # each measurement's wall-clock p95, printed beside its CPU time


def fill(db_path: Path) -> dict[str, str]:
    """The big organization, written in a few transactions; what the filters name."""
    app = create_app(db_path, seed=DEMO_SEED, runtime=False)
    db = app.state.db
    org = find_key(db, DEMO_ADMIN_KEY).organization_id  # type: ignore[union-attr]
    rng = random.Random(29)
    with db.write() as conn:
        agents = [
            r[0] for r in conn.execute("SELECT id FROM agents WHERE organization_id = ?", (org,))
        ]
        for n in range(2):
            conn.execute(
                "INSERT INTO agents (id, organization_id, name, published_version, versions, "
                "created_at, updated_at) VALUES (?, ?, ?, 1, '[1]', ?, ?)",
                (str(uuid.uuid4()), org, f"bench-{n}", iso(START), iso(START)),
            )
        agents = [
            r[0] for r in conn.execute("SELECT id FROM agents WHERE organization_id = ?", (org,))
        ]
        pool = str(uuid.uuid4())
        conn.execute(
            "INSERT INTO profile_sets (id, collection, organization_id, name, selection_strategy,"
            " allow_concurrent_use, created_at, updated_at) "
            "VALUES (?, 'pool', ?, 'bench-pool', 'round_robin', 0, ?, ?)",
            (pool, org, iso(START), iso(START)),
        )
        hooks = [str(uuid.uuid4()) for _ in range(3)]
        for n, hook in enumerate(hooks):
            conn.execute(
                "INSERT INTO webhook_integrations VALUES (?, ?, ?, ?, 'v1', '{}', ?, ?)",
                (hook, org, f"hook-{n}", f"https://hooks.example/{n}", iso(START), iso(START)),
            )
    ids = sorted(str(uuid.uuid4()) for _ in range(EXECUTIONS))  # b-trees filled in order
    seconds = 30 * 86400 / EXECUTIONS
    with db.write() as conn:
        conn.executemany(
            "INSERT INTO executions (id, organization_id, agent_id, agent_name, version, status, "
            "inputs, metadata, request, program, agent_profile_pool_id, created_at, updated_at, "
            "started_at, terminal_at, failure_reason) "
            "VALUES (?, ?, ?, 'bench', 1, ?, '{}', ?, '{}', '[]', ?, ?, ?, ?, ?, 'bench')",
            (
                (
                    ids[i],
                    org,
                    agents[i % len(agents)],
                    STATUSES[rng.randrange(len(STATUSES))],
                    json.dumps({"team": f"team-{i % 20}", "order": f"O-{i}"}),
                    pool if i % 10 == 0 else None,
                    iso(START + timedelta(seconds=i * seconds)),
                    iso(START + timedelta(seconds=i * seconds)),
                    iso(START + timedelta(seconds=i * seconds)),
                    iso(START + timedelta(seconds=i * seconds + 60)),
                )
                for i in range(EXECUTIONS)
            ),
        )
    per = DELIVERIES // EXECUTIONS
    delivery_ids = sorted(str(uuid.uuid4()) for _ in range(DELIVERIES))
    with db.write() as conn:
        conn.executemany(
            "INSERT INTO webhook_deliveries VALUES (?, ?, ?, 'EXECUTION_COMPLETED', '{}', 0, NULL,"
            " ?, ?, NULL, ?, ?, 1, 200, NULL, ?, ?)",
            (
                (
                    delivery_ids[d],
                    org,
                    hooks[d % 3],
                    f"{hooks[d % 3]}:{ids[d // per]}",
                    ids[d // per],
                    str(uuid.uuid4()),
                    ("delivered", "delivered", "failed", "pending")[d % 4],
                    iso(START + timedelta(seconds=(d // per) * seconds)),
                    iso(START + timedelta(seconds=(d // per) * seconds)),
                )
                for d in range(DELIVERIES)
            ),
        )
    with db.write() as conn:  # what the store writes beside each execution it makes
        conn.execute(BACKFILL)
    busy = ids[-1]
    with db.write() as conn:
        for n in range(EVENTS):
            event = str(uuid.uuid4())
            at = iso(START + timedelta(days=30, seconds=n))
            conn.execute(
                "INSERT INTO events (id, organization_id, agent_id, execution_id, event, payload,"
                " metadata, created_at) VALUES (?, ?, ?, ?, 'EXECUTION_STEP_STARTED', ?, '{}', ?)",
                (event, org, agents[0], busy, json.dumps({"step": n, "note": "x" * 200}), at),
            )
            for hook in hooks[:2]:
                conn.execute(
                    "INSERT INTO routing_decisions (organization_id, integration_id, event_ref, "
                    "event, execution_id, wanted, rule, reason, created_at) "
                    "VALUES (?, ?, ?, 'EXECUTION_STEP_STARTED', ?, 0, 'eventRules', ?, ?)",
                    (org, hook, event, busy, "the event rules do not list it", at),
                )
    db.close()
    return {"agent": agents[1], "pool": pool, "busy": busy, "some": ids[EXECUTIONS // 2]}


def timed(client: TestClient, path: str, cold: bool) -> tuple[float, float]:
    """p50 and p95, in ms, of ROUNDS requests (the order cache emptied before each, cold):
    of the process's CPU time (the server's work, whatever else runs on the machine;
    in-process, the client's share is small), and wall time kept in WALL."""
    times, walls = [], []
    for _ in range(ROUNDS):
        if cold:
            client.app.state.db.order_cache = OrderCache()  # type: ignore[attr-defined]
        start, wall = time.process_time(), time.perf_counter()
        answer = client.get(path)
        times.append((time.process_time() - start) * 1000)
        walls.append((time.perf_counter() - wall) * 1000)
        assert answer.status_code == 200, (path, answer.status_code, answer.text[:300])
    times.sort()
    walls.sort()
    WALL.append(walls[int(len(walls) * 0.95) - 1])
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


def filled(directory: Path) -> tuple[Path, dict[str, str]]:
    """The filled database (kept in `directory`: filling takes minutes), what it names."""
    db_path, names = directory / "bench.db", directory / "bench.json"
    if not names.exists():
        start = time.perf_counter()
        db_path.unlink(missing_ok=True)
        names.with_suffix(".tmp").write_text(json.dumps(fill(db_path)))
        names.with_suffix(".tmp").rename(names)
        print(
            f"filled {EXECUTIONS:,} executions, {DELIVERIES:,} deliveries in "
            f"{time.perf_counter() - start:.0f} s"
        )
    return db_path, json.loads(names.read_text())


def main() -> None:
    """`bench/console.py [DIR]`: with DIR, the filled database is kept there and reused."""
    with tempfile.TemporaryDirectory() as tmp:
        db_path, named = filled(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tmp))
        app = create_app(db_path, seed=DEMO_SEED, runtime=False)
        client = TestClient(app, base_url="http://127.0.0.1", client=("127.0.0.1", 1))
        page = client.get("/console/sign-in").text
        token = page.split('name="csrf" value="', 1)[1].split('"', 1)[0]
        signed = client.post(
            "/console/sign-in", data={"csrf": token, "key": DEMO_ADMIN_KEY}, follow_redirects=False
        )
        assert signed.status_code == 303
        month = iso(START + timedelta(days=15))
        filters = {
            "none": ("", ""),
            "status=failed": ("status=failed", "status=failed"),
            "agent": (f"agent={named['agent']}", f"agentId={named['agent']}"),
            "metadata team": ("metadata=team%3Dteam-7", "metadataKey=team&metadataValue=team-7"),
            "pool": (f"pool={named['pool']}", f"agentProfilePoolId={named['pool']}"),
            "time range": (
                f"from={month}&to={iso(START + timedelta(days=16))}",
                f"createdAfter={month}&createdBefore={iso(START + timedelta(days=16))}",
            ),
            "status+metadata": (
                "status=failed&metadata=team%3Dteam-7",
                "status=failed&metadataKey=team&metadataValue=team-7",
            ),
        }
        api_key = {"X-Api-Key": DEMO_ADMIN_KEY}
        client.headers.update(api_key)
        print("CPU ms of the server's work, p50 / p95 (wall-clock p95 in brackets)")
        print(
            f"{'executions filter':<18} {'console cold':>24} {'API cold':>24} "
            f"{'console warm p95':>17} {'API warm p95':>13}"
        )
        for name, (console_q, api_q) in filters.items():
            row = []
            for cold in (True, False):
                c = timed(client, f"/console/executions?{console_q}", cold)
                a = timed(
                    client, f"/agents/v2/executions?{api_q}&sortDirection=desc&pageSize=50", cold
                )
                row.append((c, a))
            (cc, ac), (cw, aw) = row
            wc, wa = WALL[-4], WALL[-3]
            print(
                f"{name:<18} {cc[0]:>6.1f} / {cc[1]:>6.1f} [{wc:>6.1f}] "
                f"{ac[0]:>6.1f} / {ac[1]:>6.1f} [{wa:>6.1f}] {cw[1]:>13.1f} {aw[1]:>13.1f}"
            )
        c = timed(client, f"/console/executions/{named['busy']}", False)
        a = timed(client, f"/agentform/v1/executions/{named['busy']}/routing", False)
        print(
            f"execution page, {EVENTS} events, 1,000 decisions: console p50 {c[0]:.1f} ms, "
            f"p95 {c[1]:.1f} ms [{WALL[-2]:.1f}]; the API's routing explanation p95 "
            f"{a[1]:.1f} ms [{WALL[-1]:.1f}] (ratio {c[1] / a[1]:.2f})"
        )
        d = timed(client, "/console/deliveries?status=failed", False)
        e = timed(client, "/agentform/v1/webhook-deliveries?status=failed&limit=100", False)
        print(f"deliveries, status=failed: console p95 {d[1]:.1f} ms, API p95 {e[1]:.1f} ms")
        o = timed(client, "/console/", False)
        print(f"overview p95 {o[1]:.1f} ms [{WALL[-1]:.1f}]")
        app.state.db.close()


if __name__ == "__main__":
    main()
