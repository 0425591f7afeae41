"""Benchmark: what `service_floor.py` measures, without HTTP: the two ASGI apps called
directly in one process, so the figure is agentform's part alone.

Over HTTP both servers also parse and write HTTP/1.1 (uvicorn's h11), the same work
for both, which dilutes the ratio; on a loaded machine that part also varies the
most. Here each request is an ASGI call with a ready scope, the service and its
floor (`_floor_app.floor_app`) interleaved in slices, and the figure is this
process's CPU per request (user + system, `time.process_time`): the least of the
slices, then the ratio. No goal is printed: the goals are those of
`service_floor.py`, over HTTP; this one shows where agentform stands apart from it.

    .venv/bin/python bench/service_floor_asgi.py [POOLS] [SLICES] [PER_SLICE]
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _floor_app import AGENT_ID, BASE, KEY, SEED, SMALL_KEY, floor_app
from agentform.service import create_app
from service_floor import prepare

EXECUTE_BODY = b'{"inputs": {"order": "A-00001"}}'
REQUESTS = {  # method, path, query, key, body, the status expected
    "GET one page (100 pools)": ("GET", "/agent-profile-pools", b"pageSize=100", SMALL_KEY, b""),
    "GET page 3 of 1,000 pools": ("GET", "/agent-profile-pools", b"page=3&pageSize=100", KEY, b""),
    "POST execute": ("POST", f"/agents/{AGENT_ID}/execute", b"", KEY, EXECUTE_BODY),
}


def _scope(method: str, path: str, query: bytes, key: str, body: bytes) -> dict[str, Any]:
    headers = [(b"host", b"127.0.0.1"), (b"x-api-key", key.encode()), (b"accept", b"*/*")]
    if body:
        headers += [(b"content-type", b"application/json")]
        headers += [(b"content-length", str(len(body)).encode())]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": BASE + path,
        "raw_path": (BASE + path).encode(),
        "query_string": query,
        "root_path": "",
        "headers": headers,
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 5000),
        "state": {},
    }


async def _call(app: Any, what: str) -> None:
    method, path, query, key, body = REQUESTS[what]
    messages = [{"type": "http.request", "body": body, "more_body": False}]
    status: list[int] = []

    async def receive() -> dict[str, Any]:
        return messages.pop() if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            status.append(message["status"])

    await app(_scope(method, path, query, key, body), receive, send)
    assert status and status[0] in (200, 202), (what, status)


async def _many(app: Any, what: str, n: int) -> None:
    for _ in range(n):
        await _call(app, what)


def main() -> None:
    pools = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000
    slices = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    per_slice = int(sys.argv[3]) if len(sys.argv) > 3 else 50
    with tempfile.TemporaryDirectory() as tmp:
        ours_db, floor_db = Path(tmp) / "ours.db", Path(tmp) / "floor.db"
        prepare(ours_db, pools)
        shutil.copy(ours_db, floor_db)
        apps = {"floor": floor_app(floor_db), "ours": create_app(ours_db, seed=SEED, runtime=False)}
        loop = asyncio.new_event_loop()
        print(f"{pools:,} pools; CPU per request, least of {slices} slices of {per_slice}")
        for what in REQUESTS:
            best = {name: float("inf") for name in apps}
            for app in apps.values():  # warm both up
                loop.run_until_complete(_many(app, what, per_slice))
            for _ in range(slices):
                for name, app in apps.items():
                    start = time.process_time()
                    loop.run_until_complete(_many(app, what, per_slice))
                    cost = (time.process_time() - start) / per_slice * 1e6
                    best[name] = min(best[name], cost)
            print(
                f"{what:28} ours {best['ours']:5.0f} us, floor {best['floor']:5.0f} us;"
                f" ratio {best['ours'] / best['floor']:.2f}"
            )
        loop.close()


if __name__ == "__main__":
    main()
