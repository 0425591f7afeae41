"""Why a request got no answer, said as its user can act on it: the name does not
resolve, nothing listens there, TLS failed, or the service took longer than the
timeout; never only the name of an exception class.

httpx wraps the operating system's error (socket.gaierror, ConnectionRefusedError,
ssl.SSLError) in its own, one or two levels down the exception's cause chain:
that is what is read here.
"""

from __future__ import annotations

import errno
import socket
import ssl
from collections.abc import Iterator

import httpx


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _seconds(value: float | None) -> str:
    return "the timeout" if value is None else f"{value:g} s"


def unreached_reason(exc: httpx.TransportError, host: str, timeout: float | None) -> str:
    """Why `exc` came instead of an answer from `host`, `timeout` seconds being
    what one request may take (None: not known here)."""
    causes = list(_causes(exc))
    if isinstance(exc, httpx.ConnectTimeout):
        return f"timeout: no connection to {host} within {_seconds(timeout)}"
    if isinstance(exc, httpx.TimeoutException):
        return f"timeout: no answer within {_seconds(timeout)} (--timeout or AGENTFORM_TIMEOUT)"
    text = " ".join(str(c) for c in causes).lower()
    if any(isinstance(c, socket.gaierror) for c in causes) or _says_dns(text):
        return f"DNS: the name {host.rsplit(':', 1)[0]} does not resolve"
    if any(isinstance(c, ssl.SSLError) for c in causes) or "[ssl" in text:
        return (
            f"TLS: the handshake with {host} failed (is it an http:// service, or does "
            "its certificate not match?)"
        )
    if any(isinstance(c, ConnectionRefusedError) for c in causes) or _refused(causes, text):
        return f"connection refused: nothing listens at {host}"
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
        return "the connection was closed before an answer came"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def lasting(exc: httpx.TransportError) -> bool:
    """Whether sending again cannot mend it: a TLS failure (a plain HTTP server, a
    certificate that does not match) is the same on every attempt."""
    causes = list(_causes(exc))
    text = " ".join(str(c) for c in causes).lower()
    return any(isinstance(c, ssl.SSLError) for c in causes) or "[ssl" in text


def _says_dns(text: str) -> bool:
    return any(
        words in text
        for words in (
            "name or service not known",
            "nodename nor servname",
            "temporary failure in name resolution",
            "getaddrinfo failed",
            "no address associated",
        )
    )


def _refused(causes: list[BaseException], text: str) -> bool:
    codes = {getattr(c, "errno", None) for c in causes}
    return errno.ECONNREFUSED in codes or "connection refused" in text
