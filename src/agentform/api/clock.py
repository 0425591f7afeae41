"""The client's time: a monotonic `now` and an async `sleep`, replaced in tests by a
fake clock so pacing and back-off are tested with no real waits."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


@dataclass(frozen=True)
class SystemClock:
    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def wall_now() -> datetime:
    """The client's one wall-clock read: an HTTP-date Retry-After is the service's
    wall time, which a monotonic clock cannot be compared with."""
    return datetime.now(UTC)


class SkippedWaits:
    """Real time plus every wait asked for, which `sleep_with` records or skips instead
    of sleeping: for tests that must not wait but expect time to pass."""

    def __init__(self, sleep_with: Callable[[float], Awaitable[None]]) -> None:
        self.sleep_with = sleep_with
        self.skipped = 0.0

    def now(self) -> float:
        return time.monotonic() + self.skipped

    async def sleep(self, seconds: float) -> None:
        self.skipped += seconds
        await self.sleep_with(seconds)
