"""Where a webhook may be sent (docs/service/limits.md#where-a-webhook-may-point),
written once for the service and the provisioner.

A webhook URL is written by a tenant and fetched by the service: pointed at a
cloud's metadata address (169.254.169.254, fd00:ec2::254) it would make the
service read the machine's credentials for them. So link-local and metadata
addresses are refused, whatever form the host is written in: `0xa9fea9fe`,
`2852039166`, `169.254.43518` and `::ffff:169.254.169.254` are all that address,
as a resolver or a browser reads them. Loopback stays allowed: it is how the
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


def address_problem(address: Address) -> str | None:
    """Why a webhook may not be sent to `address` (None: it may)."""
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    if mapped is not None:
        address = mapped
    if address.is_loopback:
        return None
    if address.is_link_local or address in METADATA_ADDRESSES:
        return (
            f"points at {address}, a link-local or cloud-metadata address "
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
