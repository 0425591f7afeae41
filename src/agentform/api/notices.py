"""What a run tells its user while it waits on the service: a request sent again
(and why), a pause the service asked for. The client calls these as it happens;
this base says nothing (the engine, tests), the command line's prints them
(cli/retry_notices.py)."""

from __future__ import annotations


class Notices:
    def retrying(self, call: str, why: str, wait: float) -> None:
        """`call` ("GET /context") is sent again in `wait` seconds, because of `why`."""

    def pausing(self, call: str, why: str, wait: float) -> None:
        """The whole run waits `wait` seconds: the service said so (`why`, on `call`)."""
