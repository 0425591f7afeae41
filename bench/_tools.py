"""What the scale benchmarks share: injected latency, a record of the requests a run
made, a bare httpx loop replaying them, and timers of wall and CPU time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import httpx


class Delayed(httpx.AsyncBaseTransport):
    """Adds `latency` seconds to every request (a round trip over a slower network)
    and records each request's method and URL."""

    def __init__(self, inner: httpx.AsyncBaseTransport, latency: float, keep: bool = False) -> None:
        self.inner = inner
        self.latency = latency
        self.requests: list[tuple[str, str, bytes]] = []
        self.statuses: list[int] = []
        self.answers: dict[tuple[str, str], tuple[int, bytes]] | None = {} if keep else None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append((request.method, str(request.url), request.content))
        if self.latency:
            await asyncio.sleep(self.latency)
        response = await self.inner.handle_async_request(request)
        self.statuses.append(response.status_code)
        if self.answers is not None:
            await response.aread()
            self.answers[(request.method, str(request.url))] = (
                response.status_code,
                response.content,
            )
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


class Replay(httpx.AsyncBaseTransport):
    """Answers from a recording after `latency`: a service that costs nothing, so the
    time left over the latency floor is the client's own."""

    def __init__(self, answers: dict[tuple[str, str], tuple[int, bytes]], latency: float) -> None:
        self.answers = answers
        self.latency = latency

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        status, content = self.answers[(request.method, str(request.url))]
        await asyncio.sleep(self.latency)
        return httpx.Response(status, content=content, headers={"content-type": "application/json"})


@dataclass
class Timed:
    wall: float = 0.0
    cpu: float = 0.0
    extra: dict[str, float] = field(default_factory=dict)


@contextmanager
def timed() -> Iterator[Timed]:
    out = Timed()
    wall, cpu = time.perf_counter(), time.process_time()
    yield out
    out.wall = time.perf_counter() - wall
    out.cpu = time.process_time() - cpu


async def bare_loop(
    key: str, requests: list[tuple[str, str, bytes]], concurrency: int, latency: float
) -> Timed:
    """The same requests from a plain httpx.AsyncClient, `concurrency` at a time,
    all at once (no paging order, no planning): the peer to compare with."""
    transport = Delayed(httpx.AsyncHTTPTransport(), latency)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(
        headers={"X-Api-Key": key}, transport=transport, limits=limits
    ) as client:
        slots = asyncio.Semaphore(concurrency)

        retried = 0

        async def one(method: str, url: str, body: bytes) -> None:
            nonlocal retried
            async with slots:
                headers = {"Content-Type": "application/json"} if body else None
                for attempt in (1, 2):
                    try:
                        response = await client.request(method, url, content=body, headers=headers)
                        break
                    except httpx.TransportError:
                        # a keep-alive connection the server closed as it was reused:
                        # a read is sent again once, as agentform's client does
                        if method != "GET" or attempt == 2:
                            raise
                        retried += 1
                response.json() if response.content else None

        with timed() as t:
            await asyncio.gather(*(one(*r) for r in requests))
    t.extra["retried"] = retried
    return t


async def timer_floor(calls: int, concurrency: int, latency: float) -> float:
    """Seconds for `calls` bare `asyncio.sleep(latency)`, `concurrency` at a time: the
    latency floor as this machine's event loop reaches it now (timer granularity,
    and a loaded machine waking the process late), with no request and no work."""
    slots = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with slots:
            await asyncio.sleep(latency)

    start = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(calls)))
    return time.perf_counter() - start
