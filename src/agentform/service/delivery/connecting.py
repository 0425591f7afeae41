"""Where a delivery connects: a host name resolved once, each address checked, and the
connection made to that address (docs/guide/security.md#what-the-service-checks-when-it-connects).

An integration's URL is checked when it is saved (rules/webhook_targets.py), but a
name can resolve elsewhere by the time a delivery is sent (DNS rebinding: a
tenant's own name pointed at 169.254.169.254 after the check). So the sender's
network backend resolves the name itself, refuses it when any address it got is
one a webhook may not reach (`resolved_problem`), and hands the checked address to
the connection: what was checked is what is connected to. httpcore still sends the
URL's host as `Host` and asks TLS for it as the server name, so a receiver and its
certificate see the name, as before.

A resolved connection is kept alive and reused like any other (the pool's), so the
check costs one resolution per new connection, not one per delivery.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import httpcore
import httpx

from agentform.core.tls import tls_context
from agentform.rules.webhook_targets import address_problem, host_address, resolved_problem

Resolver = Callable[[str, int], Awaitable[list[str]]]
"""(host, port) -> the addresses it resolves to, as text."""


async def system_resolver(host: str, port: int) -> list[str]:
    """The machine's resolver (getaddrinfo, off the event loop)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class Unreachable(httpcore.ConnectError):
    """A delivery's host may not, or cannot, be connected to; says why."""


class CheckedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network with every TCP connection's address checked first."""

    def __init__(
        self,
        resolver: Resolver,
        allow_private: bool = False,
        inner: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        self.resolver = resolver
        self.allow_private = allow_private
        self.inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        address = await self._checked(host, port, timeout)
        return await self.inner.connect_tcp(
            address,
            port,
            timeout=timeout,
            local_address=local_address,
            socket_options=socket_options,
        )

    async def _checked(self, host: str, port: int, timeout: float | None) -> str:
        written = host_address(host)
        if written is not None:  # an address in the URL (in any numeric form): no lookup
            addresses = [str(written)]
            problem = address_problem(written)
        else:
            try:
                addresses = await asyncio.wait_for(self.resolver(host, port), timeout)
            except (OSError, TimeoutError) as exc:
                raise Unreachable(f"{host} could not be resolved ({exc})") from None
            problem = resolved_problem(addresses)
        if problem and not self.allow_private:
            raise Unreachable(f"{host} {problem}")
        if not addresses:
            raise Unreachable(f"{host} resolves to no address")
        return addresses[0]

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def checked_transport(
    resolver: Resolver | None = None,
    allow_private: bool = False,
    limits: httpx.Limits | None = None,
    backend: httpcore.AsyncNetworkBackend | None = None,
) -> httpx.AsyncHTTPTransport:
    """The sender's transport: httpx's own, over a `CheckedBackend` (which checks
    nothing when the service allows private webhooks)."""
    limits = limits or httpx.Limits()
    tls = tls_context(trust_env=False)  # the process's one: loading CA certificates is slow
    transport = httpx.AsyncHTTPTransport(verify=tls, trust_env=False, limits=limits)
    # httpx takes no network backend, so its pool is made again with one, the same
    # settings as httpx gives it (httpx.AsyncHTTPTransport.__init__).
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=tls,
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=CheckedBackend(resolver or system_resolver, allow_private, backend),
    )
    return transport
