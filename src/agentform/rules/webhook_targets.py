"""Where a webhook may be sent (docs/service/limits.md#where-a-webhook-may-point),
written once for the service and the provisioner.

A webhook URL is written by a tenant and fetched by the service: pointed at a
cloud's metadata address (169.254.169.254, fd00:ec2::254) it would make the
service read the machine's credentials for them. So link-local and metadata
addresses are refused, whatever form the host is written in: `0xa9fea9fe`,
`2852039166`, `169.254.43518` and `::ffff:169.254.169.254` are all that address,
as a resolver or a browser reads them, and so is every IPv6 address that carries
a refused IPv4 address for a translator or a tunnel to reach (`embedded_ipv4`:
IPv4-compatible, IPv4-mapped, SIIT, NAT64, 6to4, Teredo). Loopback stays allowed: it is how the
embedded service is used, with receivers on the same machine.

The service can be told to allow them (`agentform service run
--allow-private-webhooks`): requests of that service are checked with
`private_webhooks_allowed` set for them. The provisioner's `validate` always
checks (a workspace does not know which service it will meet).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable
from contextvars import ContextVar
from urllib.parse import urlsplit

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

METADATA_ADDRESSES: frozenset[Address] = frozenset(
    {
        ipaddress.ip_address("fd00:ec2::254"),  # AWS over IPv6
        ipaddress.ip_address("100.100.100.200"),  # Alibaba Cloud
    }
)
"""Metadata services outside the link-local ranges (169.254.169.254 is in them)."""

METADATA_NAMES = frozenset({"metadata.google.internal", "metadata.goog", "metadata"})

private_webhooks_allowed: ContextVar[bool] = ContextVar("private_webhooks_allowed", default=False)
"""Set (for one request) by a service started with --allow-private-webhooks."""

ALLOW_FLAG = "--allow-private-webhooks"

# A host made only of numbers and dots, each in decimal, octal (0…) or hex (0x…):
# the classic IPv4 forms `inet_aton` reads (127.1, 0x7f000001, 2130706433).
_NUMERIC_HOST = re.compile(r"(?:(?:0x[0-9a-f]*|[0-9]+)\.){0,3}(?:0x[0-9a-f]*|[0-9]+)\.?", re.I)


def host_address(host: str) -> Address | None:
    """The IP address `host` (a URL's hostname) stands for, in any numeric form,
    or None when it is a name."""
    host = host.strip("[]").rstrip(".")
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])  # fe80::1%eth0: the zone aside
    except ValueError:
        pass
    if _NUMERIC_HOST.fullmatch(host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None  # digits a resolver does not read as an address either
    return None


_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052, the well-known prefix
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")  # RFC 8215, local use
_COMPATIBLE = ipaddress.IPv6Network("::/96")  # RFC 4291 §2.5.5.1 (deprecated, still routed)
_SIIT = ipaddress.IPv6Network("::ffff:0:0:0/96")  # RFC 2765, IPv4-translated
_NAT64_LENGTHS = (32, 40, 48, 56, 64, 96)
"""Where RFC 6052 puts the IPv4 address after a prefix of each length (bits 64 to
71 stay zero): a local-use network may choose any of them, so every one is read."""


def _nat64_at(value: int, length: int) -> ipaddress.IPv4Address:
    bits = f"{value:0128b}"
    rest = bits[length:64] + bits[72:] if length < 64 else bits[length:]
    return ipaddress.IPv4Address(int(rest[:32], 2))


def embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries to a translator or a tunnel."""
    value, found = int(address), []
    if address.ipv4_mapped is not None:
        found.append(address.ipv4_mapped)
    if address in _COMPATIBLE or address in _SIIT or address in _NAT64:
        found.append(ipaddress.IPv4Address(value & 0xFFFFFFFF))
    if address in _NAT64_LOCAL:
        found.extend(_nat64_at(value, length) for length in _NAT64_LENGTHS)
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:  # (server, client), the client de-obfuscated
        found.extend(address.teredo)
    return found


def address_problem(address: Address) -> str | None:
    """Why a webhook may not be sent to `address` (None: it may)."""
    carried = embedded_ipv4(address) if isinstance(address, ipaddress.IPv6Address) else []
    for inner in [address, *carried]:
        if not inner.is_loopback and (inner.is_link_local or inner in METADATA_ADDRESSES):
            what = f"{address}, which carries {inner}," if inner != address else f"{address},"
            return (
                f"points at {what} a link-local or cloud-metadata address "
                f"(allowed only by a service started with {ALLOW_FLAG})"
            )
    return None


def target_problem(url: str, allow_private: bool | None = None) -> str | None:
    """Why a webhook may not be sent to `url`'s host as written (None: it may).

    `allow_private` None: as the current request says (`private_webhooks_allowed`).
    A host name is checked again, once resolved, when a delivery is sent.
    """
    if private_webhooks_allowed.get() if allow_private is None else allow_private:
        return None
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None  # the URL rule says what is wrong with it
    if not host:
        return None
    if host.rstrip(".").lower() in METADATA_NAMES:
        return f"points at {host}, a cloud-metadata name (allowed only with {ALLOW_FLAG})"
    address = host_address(host)
    return address_problem(address) if address is not None else None


def resolved_problem(addresses: Iterable[str]) -> str | None:
    """Why a delivery may not go to a name that resolved to `addresses` (DNS
    rebinding: a name that pointed elsewhere when the integration was made)."""
    for text in addresses:
        try:
            problem = address_problem(ipaddress.ip_address(text.split("%", 1)[0]))
        except ValueError:
            continue
        if problem:
            return problem
    return None
