"""Benchmark: 10,000 pools in one organization, created then read at pageSize 100
over HTTP on loopback. Prints creates/s, pages/s, the whole read, and the cost of
an early page next to a late one (row 1 vs row 9,901)."""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from _server import KEY, service

N = 10_000


async def fill(base: str) -> float:
    start = time.perf_counter()
    async with httpx.AsyncClient(base_url=base, headers={"X-Api-Key": KEY}) as client:
        sem = asyncio.Semaphore(8)

        async def create(i: int) -> None:
            async with sem:
                r = await client.post("/agent-profile-pools", json={"name": f"pool-{i:05d}"})
                r.raise_for_status()

        await asyncio.gather(*(create(i) for i in range(N)))
    return time.perf_counter() - start


def read_all(client: httpx.Client) -> tuple[float, int]:
    start = time.perf_counter()
    seen, page = 0, 1
    while True:
        body = client.get("/agent-profile-pools", params={"page": page, "pageSize": 100}).json()
        seen += len(body["items"])
        if not body["items"]:
            break
        page += 1
    assert seen == N, seen
    return time.perf_counter() - start, page


def page_latency(client: httpx.Client, page: int, rounds: int = 200) -> float:
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        client.get(
            "/agent-profile-pools", params={"page": page, "pageSize": 100}
        ).raise_for_status()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def storage_latency(db_path: Path, page: int, rounds: int = 300) -> float:
    """The page read inside the service (SQLite + rows to models), no HTTP: median ms."""
    from agentform.service.store.database import Database
    from agentform.service.store.pages import PageParams, PageRequest
    from agentform.service.store.profile_sets import POOLS, list_sets

    db = Database(db_path)
    with db.read() as conn:
        org = conn.execute("SELECT organization_id FROM profile_sets LIMIT 1").fetchone()[0]
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        with db.read() as conn:
            list_sets(conn, POOLS, org, PageRequest(PageParams(page, 100)))
        times.append(time.perf_counter() - t)
    db.close()
    return statistics.median(times) * 1000


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, service(Path(tmp) / "bench.db") as base:
        db_path = Path(tmp) / "bench.db"
        fill_s = asyncio.run(fill(base))
        print(f"create {N} pools: {fill_s:.1f} s, {N / fill_s:.0f} creates/s (8 in flight)")
        with httpx.Client(base_url=base, headers={"X-Api-Key": KEY}) as client:
            read_all(client)  # warm up
            total_s, pages = read_all(client)
            print(
                f"read all {N} at pageSize 100: {total_s * 1000:.0f} ms, "
                f"{pages / total_s:.0f} pages/s ({pages} requests incl. the empty last)"
            )
            first, last = page_latency(client, 1), page_latency(client, 100)
            print(
                f"median page latency: page 1 (row 1) {first:.2f} ms, "
                f"page 100 (row 9,901) {last:.2f} ms, ratio {last / first:.2f}"
            )
        first, last = storage_latency(db_path, 1), storage_latency(db_path, 100)
        print(
            f"in the service, no HTTP: page 1 {first:.3f} ms, page 100 {last:.3f} ms, "
            f"ratio {last / first:.2f}"
        )


if __name__ == "__main__":
    main()
