"""Sending a request at the lowest cost per request.

Everything that can be done once is done once: the headers (key, agent), the
timeouts and the TLS context are built when the client is made; a request is
its URL, built from the base's parse (`urls.py`), and one call to the
transport. httpx's client layer (cookie jar, auth and redirect machinery, URL
merging: a third of its CPU per request) is not used; its transports are, so
vcrpy still records and replays.

`ConnectionShards` keeps one keep-alive connection per httpcore pool: a pool
checks every one of its connections, some twice over, each time a request
starts or ends, so one pool of 16 connections costs far more per request than
16 pools of one.
"""

from __future__ import annotations

import asyncio
import urllib.request
from collections import deque
from typing import Any

import httpx

from agentform.api.urls import RequestUrls
from agentform.api.waiting import wait_in_line
from agentform.core.sensitive import Sensitive, reveal
from agentform.core.tls import tls_context

TIMEOUT = httpx.Timeout(30.0, connect=10.0)  # the default of --timeout (docs/guide/connecting.md)
_EMPTY = httpx.ByteStream(b"")
_LENGTH_REQUIRED = ("POST", "PUT", "PATCH")  # an empty body is sent as Content-Length: 0


def _bodiless_headers(common: httpx.Headers, netloc: bytes) -> dict[bool, httpx.Headers]:
    """The headers of a request without a body, as httpx would complete them (Host
    first, then Content-Length: 0 for the methods in _LENGTH_REQUIRED), by whether
    the method is one of those."""
    host = [(b"Host", netloc)]
    return {
        False: httpx.Headers(host + common.raw),
        True: httpx.Headers([*host, (b"Content-Length", b"0"), *common.raw]),
    }


class ConnectionShards(httpx.AsyncBaseTransport):
    """Up to `size` keep-alive connections, each in a one-connection pool of its own."""

    def __init__(self, size: int, proxy: str | None = None) -> None:
        self.size = max(1, size)
        self.proxy = proxy
        self.shards: list[httpx.AsyncHTTPTransport] = []
        self.idle: list[httpx.AsyncHTTPTransport] = []  # last used first: warm connections
        self.waiters: deque[asyncio.Future[httpx.AsyncHTTPTransport]] = deque()

    def _new_shard(self) -> httpx.AsyncHTTPTransport:
        shard = httpx.AsyncHTTPTransport(
            verify=tls_context(),  # the process's one: loading CA certificates is slow
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
            proxy=self.proxy,
        )
        self.shards.append(shard)
        return shard

    async def _checkout(self) -> httpx.AsyncHTTPTransport:
        if self.idle:
            return self.idle.pop()
        if len(self.shards) < self.size:
            return self._new_shard()
        return await wait_in_line(self.waiters, self._checkin)

    def _checkin(self, shard: httpx.AsyncHTTPTransport) -> None:
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_result(shard)
                return
        self.idle.append(shard)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        shard = await self._checkout()
        try:
            response = await shard.handle_async_request(request)
            try:
                await response.aread()  # the whole body, so the connection is free again
            finally:
                await response.aclose()
            return response
        finally:
            self._checkin(shard)

    async def aclose(self) -> None:
        for shard in self.shards:
            await shard.aclose()


def environment_proxy(url: str) -> str | None:
    """The proxy the environment names for `url` (HTTPS_PROXY, ALL_PROXY, NO_PROXY...)."""
    parsed = httpx.URL(url)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(parsed.scheme) or proxies.get("all")
    if proxy and not urllib.request.proxy_bypass(parsed.host):
        return proxy
    return None


class Sender:
    """Builds and sends one request to the service; answers a fully read response."""

    def __init__(
        self,
        base_url: str,
        api_key: str | Sensitive,
        transport: httpx.AsyncBaseTransport | None,
        size: int,
        timeout: float | None = None,
    ) -> None:
        """`timeout`: the seconds one request may take, in each of its phases
        (connect, send, wait for the answer); None: TIMEOUT."""
        self.base_url = base_url.rstrip("/")
        self.urls = RequestUrls(self.base_url)
        self.transport = transport or ConnectionShards(size, environment_proxy(self.base_url))
        self.headers = httpx.Headers(
            {
                "Accept": "application/json",
                "Accept-Encoding": "gzip, deflate",
                "Connection": "keep-alive",
                "User-Agent": "agentform",
                "X-Api-Key": reveal(api_key),  # the key leaves its mark only for the wire
            }
        )
        self.timeout = TIMEOUT if timeout is None else httpx.Timeout(timeout)
        self.extensions = {"timeout": self.timeout.as_dict()}
        self.bodiless = _bodiless_headers(self.headers, self.urls.base.netloc)

    async def send(
        self, method: str, path: str, json: Any = None, params: dict[str, Any] | None = None
    ) -> httpx.Response:
        url = self.urls.url(path, params)
        if json is None:
            # the headers httpx would add built once: given with `stream=`, httpx adds
            # and re-checks none (its header checks were a quarter of a read's CPU)
            request = httpx.Request(
                method,
                url,
                headers=self.bodiless[method in _LENGTH_REQUIRED],
                stream=_EMPTY,
                extensions=self.extensions,
            )
            request.read()
        else:
            request = httpx.Request(
                method, url, headers=self.headers, json=json, extensions=self.extensions
            )
        response = await self.transport.handle_async_request(request)
        response.request = request
        if not response.is_closed:  # (ConnectionShards reads and closes it already)
            try:
                await response.aread()
            finally:
                await response.aclose()
        return response

    async def aclose(self) -> None:
        await self.transport.aclose()
