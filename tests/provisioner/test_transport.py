"""The client's own transport over a real loopback socket: connections are kept and
reused, never more than the ceiling, and a connection the server closed is replaced."""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import Awaitable, Callable
from typing import Any

from agentform.api.client import ApiClient


class KeepAliveServer:
    """A tiny HTTP/1.1 server on 127.0.0.1 that answers every request with its own
    request line as JSON, counting connections; `close_after` ends a connection after
    that many requests (as a server's keep-alive limit does)."""

    def __init__(self, close_after: int = 0) -> None:
        self.connections = 0
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        self.close_after = close_after

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        served = 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode().split("\r\n")
                headers = {
                    k.lower(): v.strip() for k, v in (h.split(":", 1) for h in lines[1:] if h)
                }
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                self.requests.append((lines[0], headers, body))
                answer = json.dumps({"line": lines[0]}).encode()
                served += 1
                last = served == self.close_after
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(answer)}\r\n".encode()
                    + (b"Connection: close\r\n" if last else b"")
                    + b"\r\n"
                    + answer
                )
                await writer.drain()
                if last:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    def run(self, fn: Callable[[str], Awaitable[Any]]) -> Any:
        async def go() -> Any:
            server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
            port = server.sockets[0].getsockname()[1]
            async with server:
                return await fn(f"http://127.0.0.1:{port}/agents/v2")

        return asyncio.run(go())


def test_connections_are_reused_and_capped_by_the_ceiling() -> None:
    server = KeepAliveServer()

    async def go(base: str) -> list[Any]:
        async with ApiClient(base, "key-1", concurrency=4) as api:
            return await asyncio.gather(
                *(
                    api.request("GET", "/p", params={"page": i, "searchName": "a b/é"})
                    for i in range(300)
                )
            )

    answers = server.run(go)
    assert len(answers) == 300 and len(server.requests) == 300
    assert 1 <= server.connections <= 4
    line, headers, _ = server.requests[0]
    assert line.startswith("GET /agents/v2/p?page=") and "searchName=a%20b%2F%C3%A9" in line
    assert headers["x-api-key"] == "key-1" and headers["user-agent"] == "agentform"
    assert headers["host"].startswith("127.0.0.1:")


def test_bodies_are_sent_as_compact_json_and_a_closed_connection_is_replaced() -> None:
    server = KeepAliveServer(close_after=3)

    async def go(base: str) -> None:
        async with ApiClient(base, "key-1", concurrency=1) as api:
            for i in range(10):
                await api.request("POST", "/p", json={"name": f"n{i}", "é": True})

    server.run(go)
    assert len(server.requests) == 10
    assert server.connections == 4  # 3 + 3 + 3 + 1
    _, headers, body = server.requests[0]
    assert body == '{"name":"n0","é":true}'.encode()
    assert headers["content-type"] == "application/json"


def test_no_import_fails_while_requests_are_made(monkeypatch: Any) -> None:
    """The async stack stays on its fast path: httpcore asks `sniffio` which event
    loop runs on every request, and when sniffio is missing that is a failed import
    each time (a quarter of the client's time per request)."""
    import builtins

    failed: list[str] = []
    real_import = builtins.__import__

    def recording_import(name: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return real_import(name, *args, **kwargs)
        except ImportError:
            failed.append(name)
            raise

    async def go(base: str) -> None:
        async with ApiClient(base, "k", concurrency=2) as api:
            await api.request("GET", "/warm-up")  # modules imported once are fine
            monkeypatch.setattr(builtins, "__import__", recording_import)
            await asyncio.gather(*(api.request("GET", f"/p/{i}") for i in range(10)))

    KeepAliveServer().run(go)
    assert failed == []


def test_a_cancelled_wait_for_a_connection_leaves_the_shards_consistent() -> None:
    """A request waiting for a connection is cancelled, and a connection is checked in
    before its task resumes (passing over its waiter): the cancellation propagates
    as itself, and the connection is free for the next request."""
    from agentform.api.transport import ConnectionShards

    async def go() -> None:
        shards = ConnectionShards(1)
        shard = await shards._checkout()
        waiting = asyncio.create_task(shards._checkout())
        await asyncio.sleep(0)
        assert len(shards.waiters) == 1
        waiting.cancel()
        shards._checkin(shard)  # before the cancelled task runs: its waiter is skipped
        results = await asyncio.gather(waiting, return_exceptions=True)
        assert isinstance(results[0], asyncio.CancelledError), results
        assert not shards.waiters and shards.idle == [shard]
        assert await asyncio.wait_for(shards._checkout(), 1) is shard
        await shards.aclose()

    asyncio.run(go())


def test_every_client_of_a_process_verifies_with_one_tls_context() -> None:
    """Loading CA certificates costs ~20 ms of CPU: made once per process, not once per
    client (the sender's transport made two per runtime start)."""
    from agentform.api.transport import ConnectionShards
    from agentform.core.tls import tls_context
    from agentform.service.delivery.connecting import checked_transport

    shards = [ConnectionShards(2)._new_shard() for _ in range(2)]
    contexts = {id(s._pool._ssl_context) for s in shards}
    assert contexts == {id(tls_context())}
    senders = [checked_transport()._pool._ssl_context for _ in range(2)]
    assert senders[0] is senders[1] is tls_context(trust_env=False)
    assert tls_context(trust_env=False).verify_mode == ssl.CERT_REQUIRED
