"""Benchmark: a list and an execute, each next to the floor of its work.

The floor (`_floor_app.py floor`) is a bare FastAPI endpoint on a copy of the same
database: for `GET /agent-profile-pools?pageSize=100`, the same page of the same
table through the same response model; for `POST /agents/{id}/execute`, the same
body model and the same execution row inserted. Both servers run as subprocesses
under uvicorn's h11 protocol; the figure is the server process's CPU per 1,000
requests (user + system, from /proc), sent one at a time over one keep-alive
connection, the two servers interleaved, min/median/max of the rounds.

    .venv/bin/python bench/service_floor.py [POOLS] [REQUESTS] [ROUNDS]

GET is measured on a list that fits in one page (100 pools, the common case) and
on one of POOLS pools read page after page. Goals (issue 30): GET <= 1.3x its
floor, POST execute <= 1.5x its floor.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from _floor_app import AGENT_ID, KEY, ORG_ID, SEED, SMALL_KEY, SMALL_ORG_ID
from _server import Running, _serving
from agentform.service import create_app
from agentform.service.models.profile_sets import ProfileSetCreate
from agentform.service.store.profile_sets import POOLS, create_set

SMALL = 100  # the small organization's pools: one page, the common list
GOALS = {"GET one page": 1.3, "GET pages": 1.3, "POST": 1.5}
LABELS = {
    "GET one page": f"GET /agent-profile-pools?pageSize=100, {SMALL} pools",
    "GET pages": "GET /agent-profile-pools?pageSize=100&page=N, {pools:,} pools",
    "POST": "POST /agents/{{id}}/execute",
}
CHUNK = 100
EXECUTE_BODY = {"inputs": {"order": "A-00001"}}


def prepare(db: Path, pools: int) -> None:
    """The database both servers start from: the seed, `pools` pools in one
    organization and SMALL in the other."""
    app = create_app(db, seed=SEED, runtime=False)
    database = app.state.db
    with database.write() as conn:
        for org_id, count in ((ORG_ID, pools), (SMALL_ORG_ID, SMALL)):
            for i in range(count):
                create_set(conn, POOLS, org_id, ProfileSetCreate(name=f"pool-{i:05d}"))
    database.close()


@contextmanager
def server(mode: str, db: Path) -> Iterator[Running]:
    script = str(Path(__file__).parent / "_floor_app.py")
    with _serving([sys.executable, script, mode, str(db)]) as svc:
        yield svc


def cpu_per_1000(svc: Running, client: httpx.Client, send: Callable[[str], None], n: int) -> float:
    """The server's CPU milliseconds per 1,000 requests of `send`."""
    before = svc.cpu()
    for _ in range(n):
        send(svc.base)
    return (svc.cpu() - before) / n * 1000 * 1000


def senders(client: httpx.Client, pages: int) -> dict[str, Callable[[str], None]]:
    state = {"page": 0}

    def get(base: str) -> None:
        state["page"] = state["page"] % pages + 1
        r = client.get(
            f"{base}/agent-profile-pools", params={"page": state["page"], "pageSize": 100}
        )
        assert r.status_code == 200 and len(r.json()["items"]) == 100, r.text[:200]

    def get_one(base: str) -> None:
        small = {"X-Api-Key": SMALL_KEY}
        r = client.get(f"{base}/agent-profile-pools", params={"pageSize": 100}, headers=small)
        assert r.status_code == 200 and len(r.json()["items"]) == SMALL, r.text[:200]

    def post(base: str) -> None:
        r = client.post(f"{base}/agents/{AGENT_ID}/execute", json=EXECUTE_BODY)
        assert r.status_code == 202, r.text[:200]

    return {"GET one page": get_one, "GET pages": get, "POST": post}


def main() -> None:
    pools = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    ratios: dict[str, list[float]] = {what: [] for what in GOALS}
    costs: dict[str, list[tuple[float, float]]] = {what: [] for what in GOALS}
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        ours_db, floor_db = Path(tmp) / "ours.db", Path(tmp) / "floor.db"
        prepare(ours_db, pools)
        shutil.copy(ours_db, floor_db)
        ours = stack.enter_context(server("ours", ours_db))
        floor = stack.enter_context(server("floor", floor_db))
        client = stack.enter_context(httpx.Client(headers={"X-Api-Key": KEY}))
        send = senders(client, max(1, pools // 100))
        for what in GOALS:  # warm both up
            for svc in (floor, ours):
                cpu_per_1000(svc, client, send[what], n // 4)
        for _ in range(rounds):
            for what in GOALS:
                # in slices of CHUNK, alternating: both see the machine's load alike
                mine = base = 0.0
                for _ in range(n // CHUNK):
                    base += cpu_per_1000(floor, client, send[what], CHUNK) * CHUNK / n
                    mine += cpu_per_1000(ours, client, send[what], CHUNK) * CHUNK / n
                costs[what].append((mine, base))
                ratios[what].append(mine / base)
    print(
        f"{pools:,} pools; {n:,} requests a round, {rounds} rounds; server CPU per 1,000"
        f" (the two interleaved in slices of {CHUNK})"
    )
    for what, label in LABELS.items():
        mine = statistics.median(c[0] for c in costs[what])
        base = statistics.median(c[1] for c in costs[what])
        r = sorted(ratios[what])
        print(
            f"{label.format(pools=pools):58} ours {mine:6.0f} ms, floor {base:6.0f} ms; ratio "
            f"{r[0]:.2f} / {statistics.median(r):.2f} / {r[-1]:.2f} (goal <= {GOALS[what]})"
        )


if __name__ == "__main__":
    main()
