"""Benchmark: the cost of authenticating a request, before and after the key map.

Release 0.1 looked the key up in SQLite on every request, on the event loop (the
`caller` dependency is async). Now the lookup is a dict in memory, reloaded after
each commit that changes a key. Measured side by side in one run, in-process
(httpx.ASGITransport, no network), three interleaved rounds, medians: the
lookup alone, and a whole GET /context. The "SQLite" rows swap in release
0.1's query for the in-memory lookup.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from agentform.service import DEMO_ADMIN_KEY, create_app
from agentform.service.http import auth as auth_module
from agentform.service.store.database import Database
from agentform.service.store.organizations import ApiKey, find_key, hash_key

ROUNDS = 3000


def release_lookup(db: Database, key: str) -> ApiKey | None:
    """Release 0.1's lookup: one SQLite query per request."""
    with db.read() as conn:
        row = conn.execute(
            "SELECT k.id, k.name, k.role, k.revoked, o.id AS org_id, o.name AS org_name "
            "FROM api_keys k JOIN organizations o ON o.id = k.organization_id "
            "WHERE k.key_hash = ?",
            (hash_key(key),),
        ).fetchone()
    if row is None or row["revoked"]:
        return None
    return ApiKey(row["id"], row["name"], row["role"], row["org_id"], row["org_name"])


@contextmanager
def lookup(fn: Callable[[Database, str], ApiKey | None]) -> Iterator[None]:
    saved = auth_module.find_key
    auth_module.find_key = fn  # type: ignore[assignment]
    try:
        yield
    finally:
        auth_module.find_key = saved  # type: ignore[assignment]


def time_lookup(db: Database, fn: Callable[[Database, str], ApiKey | None]) -> float:
    times = []
    for _ in range(ROUNDS):
        t = time.perf_counter()
        assert fn(db, DEMO_ADMIN_KEY) is not None
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


async def time_requests(app: object) -> tuple[float, float]:
    """Median µs of one GET /context, and requests/s with 16 in flight."""
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    headers = {"X-Api-Key": DEMO_ADMIN_KEY}
    async with httpx.AsyncClient(transport=transport, base_url="http://svc/agents/v2") as client:
        times = []
        for _ in range(ROUNDS // 3):
            t = time.perf_counter()
            (await client.get("/context", headers=headers)).raise_for_status()
            times.append(time.perf_counter() - t)
        start = time.perf_counter()
        sem = asyncio.Semaphore(16)

        async def one() -> None:
            async with sem:
                (await client.get("/context", headers=headers)).raise_for_status()

        await asyncio.gather(*(one() for _ in range(ROUNDS)))
        rate = ROUNDS / (time.perf_counter() - start)
    return statistics.median(times) * 1e6, rate


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(Path(tmp) / "bench.db")
        db = app.state.db
        variants = (("SQLite (release 0.1)", release_lookup), ("in memory (now)", find_key))
        runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name, _ in variants}
        for _ in range(3):  # interleaved, so both see the same machine
            for name, fn in variants:
                with lookup(fn):
                    one = time_lookup(db, fn)
                    median, rate = asyncio.run(time_requests(app))
                runs[name].append((one, median, rate))
        rows = [
            (name, *(statistics.median(r[i] for r in runs[name]) for i in range(3)))
            for name, _ in variants
        ]
        print(f"{'key lookup':<22}{'lookup µs':>12}{'GET /context µs':>18}{'req/s (16)':>12}")
        for name, one, median, rate in rows:
            print(f"{name:<22}{one:>12.1f}{median:>18.0f}{rate:>12.0f}")
        (_, old_one, old_req, old_rate), (_, new_one, new_req, new_rate) = rows
        print(
            f"ratio old/new: lookup {old_one / new_one:.0f}x, "
            f"request {old_req / new_req:.2f}x, throughput new/old {new_rate / old_rate:.2f}x"
        )
        db.close()


if __name__ == "__main__":
    main()
