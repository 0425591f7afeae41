"""Benchmark: the client's CPU per answered read of a plan, layer by layer.

A 1,000-object workspace (`plan_scale.py`'s) is put on `agentform service run`,
planned once at 0 ms with every answer recorded, then its member reads (one
page each, the plan's usual read) are replayed from memory: no service, no
socket, so each figure is the client's CPU time per read (time.process_time,
the best of 7 rounds; each row's code runs in this one process, so compare
rows, and runs of two trees side by side, not times across machines):

- the parts alone: the URL, httpx's Request, JSON decoding and the answer's
  checks, page_of;
- `ApiClient.request` and `list_all` one at a time, then 16 in flight (waiting
  for a slot, the successor's turn), with the answer ready at once, then with
  `_tools.Replay` (plan_scale's stand-in service) building each answer;
- a floor of httpx's parts alone at 16 in flight (Request, Replay, json);
- the whole replayed plan: the live read and the diff, per request.

`.venv/bin/python bench/plan_reads.py [N]` (N objects, default 1,000).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from _server import KEY
from _tools import Replay
from agentform.api.answers import decoded, page_of
from agentform.api.client import ApiClient
from agentform.api.urls import RequestUrls
from agentform.config.loader import load_workspace
from agentform.engine.live import read_live
from agentform.engine.planner import diff_plan
from plan_scale import recorded

QUERY = {"pageSize": 100, "page": 1}


class Ready(httpx.AsyncBaseTransport):
    """Answers at once with responses built beforehand: no stand-in's cost."""

    def __init__(self, answers: dict[tuple[str, str], tuple[int, bytes]]) -> None:
        json = {"content-type": "application/json"}
        self.ready = {
            k: httpx.Response(s, content=c, headers=json) for k, (s, c) in answers.items()
        }

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return self.ready[(request.method, str(request.url))]


def per_read(count: int, work: Callable[[], object], rounds: int = 7) -> float:
    """µs of CPU per read: the best of `rounds`."""
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        work()
        best = min(best, time.process_time() - start)
    return best / count * 1e6


def layers(base: str, answers: dict[tuple[str, str], tuple[int, bytes]]) -> dict[str, float]:
    urls = [u for m, u in answers if m == "GET" and "/members" in u]
    paths = [u[len(base) :].split("?")[0] for u in urls]
    n, ready, replay, built = len(paths), Ready(answers), Replay(answers, 0), RequestUrls(base)
    made = [built.url(p, QUERY) for p in paths]
    responses = [ready.ready[("GET", u)] for u in urls]
    bodies = [r.json() for r in responses]
    headers = httpx.Headers({"Host": "h", "Accept": "application/json", "X-Api-Key": "k"})

    def client(transport: httpx.AsyncBaseTransport, go: Callable[[ApiClient], Any]) -> float:
        async def run() -> None:
            async with ApiClient(base, KEY, transport=transport, concurrency=16) as api:
                await go(api)

        return per_read(n, lambda: asyncio.run(run()))

    async def one_by_one(api: ApiClient, list_all: bool) -> None:
        for p in paths:
            await (api.list_all(p) if list_all else api.request("GET", p, params=QUERY))

    async def floor() -> None:
        slots = asyncio.Semaphore(16)

        async def one(url: httpx.URL) -> Any:
            async with slots:
                answer = await replay.handle_async_request(
                    httpx.Request("GET", url, headers=headers)
                )
            return answer.json()

        await asyncio.gather(*(one(u) for u in made))

    def together(api: ApiClient) -> Any:
        return asyncio.gather(*(api.list_all(p) for p in paths))

    return {
        "RequestUrls.url": per_read(n, lambda: [built.url(p, QUERY) for p in paths]),
        "httpx.Request as the Sender builds it": per_read(
            n,
            lambda: [
                httpx.Request("GET", u, headers=headers, stream=httpx.ByteStream(b"")) for u in made
            ],
        ),
        "Response.json": per_read(n, lambda: [r.json() for r in responses]),
        "decoded (json and the content-type check)": per_read(
            n, lambda: [decoded(r, "GET") for r in responses]
        ),
        "page_of": per_read(n, lambda: [page_of(b, "/x", "id") for b in bodies]),
        "ApiClient.request, one at a time, answer ready": client(
            ready, lambda a: one_by_one(a, False)
        ),
        "ApiClient.list_all, one at a time, answer ready": client(
            ready, lambda a: one_by_one(a, True)
        ),
        "ApiClient.list_all, 16 in flight, answer ready": client(ready, together),
        "ApiClient.list_all, 16 in flight, Replay answering": client(replay, together),
        "floor: Request + Replay + json, 16 in flight": per_read(n, lambda: asyncio.run(floor())),
    }


def whole_plan(root: Path, base: str, answers: dict[tuple[str, str], tuple[int, bytes]]) -> str:
    workspace = load_workspace(root)

    async def once() -> tuple[float, float]:
        async with ApiClient(base, KEY, transport=Replay(answers, 0), concurrency=16) as api:
            start = time.process_time()
            live = await read_live(workspace, api)
            read = time.process_time()
            diff_plan(workspace, live, base)
            return (read - start) / api.sent * 1e6, (time.process_time() - read) / api.sent * 1e6

    runs = sorted(asyncio.run(once()) for _ in range(5))
    return (
        "the whole replayed plan, per request (5 runs, sorted): live read "
        + "/".join(f"{r:.1f}" for r, _ in runs)
        + " us, diff "
        + "/".join(f"{d:.1f}" for d in sorted(d for _, d in runs))
        + " us"
    )


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000
    with tempfile.TemporaryDirectory() as tmp:
        with recorded(tmp, n) as (svc, root, answers):
            base = svc.base
        print(f"N={n}: CPU per member read (one page), us, best of 7")
        for name, us in layers(base, answers).items():
            print(f"{us:7.1f}  {name}")
        print(whole_plan(root, base, answers))


if __name__ == "__main__":
    main()
