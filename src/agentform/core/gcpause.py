"""Pausing Python's cyclic garbage collector around bulk work.

Loading a large workspace or reading thousands of live objects makes hundreds of
thousands of objects and no garbage cycles; the collector would rescan all of
them again and again (over half the time of loading 10,000 objects).

Pausing only defers that scan: everything the work made is in the youngest
generation when the collector is back on, so the first collection after it scans
all of it, and the next older one again. Work whose objects the run keeps (the
live state read, the plan decided) says `keep=True`: when it ends normally they
are frozen out of every later collection (`gc.freeze`). At 10,000 objects those
two scans were 0.3-0.4 s of the plan's CPU, after its last answer
(docs/performance.md). A plan leaves a few dozen cyclic objects (closures) at
that point, which then stay until the process ends. Work that fails is not
frozen: its traceback holds cycles, and asyncio reports a future's unretrieved
error only when the collector frees it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused(keep: bool = False) -> Iterator[None]:
    """The collector off for the block; `keep`: what the block made is frozen out of
    later collections when it ends normally (unless an outer block paused it)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    except BaseException:
        if was_enabled:
            gc.enable()
        raise
    if was_enabled:
        if keep:
            gc.freeze()
        gc.enable()
