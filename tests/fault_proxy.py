"""A faulty HTTP proxy on loopback, for fault-injection tests.

It listens on 127.0.0.1 (a port the OS chooses) in front of a service and, for
each request, draws from a fixed seed, the request (method, target and body,
each object id written as the object's name, so ids the service makes up do not
change the draw) and how many times that same request came before, whether
to: forward it, answer 429 (Retry-After: 0) or 503 without forwarding, drop
the connection before or after forwarding, or hold the request until the
client gives up (its timeout) and then drop it, before forwarding (it never
lands) or after (it landed, the answer is lost). The same seed gives the same
faults to the same requests, whatever order concurrent requests arrive in.

A hold costs the client's whole timeout in real time. With `held="answered"` the
proxy answers a request it would hold at once, marked (HELD), and closes the
connection; the client's transport wrapped in `TimesOutWhenHeld` raises for it
what the client's own timeout raises (httpx.ReadTimeout), without the wait. What
the client sees, and what landed, are the same; only the time is not spent.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http import HTTPStatus

import httpx

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
FAULTS = ("429", "503", "drop-before", "drop-after", "hold-before", "hold-after")
HOP = {"host", "connection", "keep-alive", "transfer-encoding", "content-length"}
HELD = "X-Fault-Held"  # marks the answer to a request held with held="answered"


class FaultProxy:
    def __init__(
        self,
        upstream: str,
        seed: int,
        rates: dict[str, float],
        reads: float = 1.0,
        held: str = "until-timeout",
    ) -> None:
        assert held in ("until-timeout", "answered")
        self.held = held
        self.upstream = upstream
        self.seed = seed
        self.rates = rates  # of each fault, for writes
        self.reads = reads  # the share of those rates a GET gets
        self.seen: Counter[tuple[str, str, bytes]] = Counter()
        self.names: dict[str, str] = {}
        self.injected: Counter[str] = Counter()
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.AbstractServer | None = None
        self._http: httpx.AsyncClient | None = None

    def learn(self, content: bytes) -> None:
        """Remembers the name of every object an answer shows (id -> name)."""
        try:
            data = json.loads(content)
        except ValueError:
            return
        items = data.get("items", [data]) if isinstance(data, dict) else data
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and "id" in item and "name" in item:
                self.names[str(item["id"])] = str(item["name"])

    def decide(self, method: str, target: str, body: bytes) -> str | None:
        target = UUID.sub(lambda m: self.names.get(m.group(0), "?"), target)
        key = (method, target, body)
        self.seen[key] += 1
        digest = hashlib.sha256(
            f"{self.seed}|{method}|{target}|{self.seen[key]}|".encode() + body
        ).digest()
        draw = int.from_bytes(digest[:8], "big") / 2**64
        scale = self.reads if method == "GET" else 1.0
        for fault in FAULTS:
            draw -= self.rates.get(fault, 0.0) * scale
            if draw < 0:
                self.injected[fault] += 1
                return fault
        return None

    # -- serving -----------------------------------------------------------------
    def start(self) -> None:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)

    async def _start(self) -> None:
        self._http = httpx.AsyncClient(base_url=self.upstream, timeout=30)
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()  # its selector and self-pipe sockets with it

    async def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
        if self._http is not None:
            await self._http.aclose()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await self._one(reader, writer):
                pass
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Handles one request of the connection; False when the connection ends."""
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
        length = int({k.lower(): v for k, v in headers.items()}.get("content-length", "0"))
        body = await reader.readexactly(length) if length else b""
        fault = self.decide(method, target, body)
        if fault in ("429", "503"):
            status = int(fault)
            extra = {"Retry-After": "0"} if status == 429 else {}
            reply = json.dumps({"code": status, "message": "injected"}).encode()
            await _write(writer, status, {"Content-Type": "application/json", **extra}, reply)
            return True
        if fault == "drop-before":
            return False
        if fault == "hold-before":
            return await self._hold(reader, writer, fault)
        assert self._http is not None
        sent = {k: v for k, v in headers.items() if k.lower() not in HOP}
        response = await self._http.request(method, target, headers=sent, content=body)
        self.learn(response.content)
        if fault == "drop-after":
            return False
        if fault == "hold-after":
            return await self._hold(reader, writer, fault)
        kept = {"Content-Type": response.headers.get("content-type", "application/json")}
        if "retry-after" in response.headers:
            kept["Retry-After"] = response.headers["retry-after"]
        await _write(writer, response.status_code, kept, response.content)
        return True

    async def _hold(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, fault: str
    ) -> bool:
        """Holds the request until the client gives up, or answers it marked at once;
        the connection ends either way."""
        if self.held == "answered":
            marked = {HELD: fault, "Connection": "close"}
            await _write(writer, HTTPStatus.GATEWAY_TIMEOUT, marked, b"")
        else:
            await _until_closed(reader)
        return False


class TimesOutWhenHeld(httpx.AsyncBaseTransport):
    """The client's side of `held="answered"`: a marked answer is the timeout the
    client's own clock would have ended the request with."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if HELD in response.headers:
            await response.aclose()
            raise httpx.ReadTimeout("held past the client's timeout", request=request)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


async def _write(
    writer: asyncio.StreamWriter, status: int, headers: dict[str, str], body: bytes
) -> None:
    head = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}"]
    if status != 204:
        head.append(f"Content-Length: {len(body)}")
    head += [f"{k}: {v}" for k, v in headers.items()]
    writer.write(
        ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + (body if status != 204 else b"")
    )
    await writer.drain()


async def _until_closed(reader: asyncio.StreamReader, longest: float = 30.0) -> None:
    """Holds the request until the client gives up and closes the connection."""
    try:
        async with asyncio.timeout(longest):
            while await reader.read(65536):
                pass
    except TimeoutError:
        pass


@contextmanager
def fault_proxy(
    upstream: str,
    seed: int,
    rates: dict[str, float],
    reads: float = 1.0,
    held: str = "until-timeout",
) -> Iterator[FaultProxy]:
    proxy = FaultProxy(upstream, seed, rates, reads, held)
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.stop()
