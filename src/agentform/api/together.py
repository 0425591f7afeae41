"""Running reads together, all or none: when one fails, the others stop.

`asyncio.gather` raises the first error and leaves the others running: in a run
that has failed they would go on sending requests and holding slots of the
window until they finished. `TaskGroup` stops them but wraps the error in an
ExceptionGroup, which every boundary would have to unwrap.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def all_or_none(*awaitables: Awaitable[T]) -> list[T]:
    """The results, in order; on the first error the others are cancelled (and
    awaited, so nothing is left under way) and that error is raised."""
    import asyncio  # here: the kinds import this module, and `validate` runs no loop

    tasks = [asyncio.ensure_future(a) for a in awaitables]
    try:
        return await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
