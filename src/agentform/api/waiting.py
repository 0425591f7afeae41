"""Waiting in line for something another task hands over (a slot of the window, a
connection): one way of leaving the line, shared by both.

The one handing over pops the waiters at the front, skips those already done
(cancelled), and gives the first live one what it has. A waiter cancelled after
it was handed something gives it back; one cancelled before leaves the line,
unless a hand-over already passed over it (it is no longer there)."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


async def wait_in_line(
    line: deque[asyncio.Future[T]],
    give_back: Callable[[T], object],
    front: bool = False,
    joined: Callable[[], object] = lambda: None,
) -> T:
    """What is handed to this waiter (at the back of `line`, or at its front);
    `joined` runs once it is in line (to hand it something free at once)."""
    waiter: asyncio.Future[T] = asyncio.get_running_loop().create_future()
    if front:
        line.appendleft(waiter)
    else:
        line.append(waiter)
    joined()
    try:
        return await waiter
    except BaseException:
        if waiter.done() and not waiter.cancelled():
            give_back(waiter.result())  # handed over, but it will not be used
        elif waiter in line:  # a hand-over may have passed over it already
            line.remove(waiter)
        raise
