"""Pausing Python's cyclic garbage collector around bulk work.

Loading a large workspace or reading thousands of live objects makes hundreds of
thousands of objects and no garbage cycles; the collector would rescan all of
them again and again (over half the time of loading 10,000 objects).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
