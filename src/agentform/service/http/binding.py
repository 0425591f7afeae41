"""Where the service listens, and so to whom its console answers.

The console (service/console/) is served on the service's own port. Bound to
loopback, it answers loopback clients only; bound elsewhere (`--host 0.0.0.0`),
the operator chose to be reachable, and it answers there too. The setting
`ServiceSettings.console` carries the choice from `service run` to the console.
"""

from __future__ import annotations

import ipaddress
from typing import Final, Literal

CONSOLE_PATH = "/console"
CONSOLE_LOOPBACK: Final = "loopback"
CONSOLE_ANY: Final = "any"
CONSOLE_OFF: Final = "off"


def is_loopback_host(host: str | None) -> bool:
    """Whether `host` (an address or a name, without port) is this machine's loopback."""
    if not host:
        return False
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def console_mode(host: str, wanted: bool) -> Literal["loopback", "any", "off"]:
    """Off, or on loopback only when the service is bound there, else for every client."""
    if not wanted:
        return CONSOLE_OFF
    return CONSOLE_LOOPBACK if is_loopback_host(host) else CONSOLE_ANY
