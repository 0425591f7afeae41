"""Pausing Python's cyclic garbage collector around bulk work.

Loading a large workspace or reading thousands of live objects makes hundreds of
thousands of objects and no garbage cycles; the collector would rescan all of
them again and again (over half the time of loading 10,000 objects).

Pausing only defers that scan: everything the work made is in the youngest
generation when the collector is back on, so the first collection after it scans
all of it, and the next older one again. Work whose objects the run keeps and
which leaves no garbage cycles (the live read, the diff) says `keep=True`: when
it ends normally, everything then tracked is frozen out of every later
collection (`gc.freeze`). At 10,000 objects those scans were 0.2-0.4 s of the
plan's CPU, after its last answer (docs/performance.md). A plan's read and diff
leave a dozen cyclic objects (closures), which then stay until the process ends.
A workspace load is not frozen: the templates' environment it leaves is a cycle
as large as its files. Work that fails is not frozen either: its traceback holds
cycles, and asyncio reports a future's unretrieved error only when the collector
frees it.

The program's start-up (imports: long-lived objects, no garbage) is paused the same
way by `main()`, up to the command's import (`pause_start_up`, `start_up_done`).
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


class _StartUp:
    """Whether the collector is off for the program's start-up (see `pause_start_up`)."""

    paused = False


def pause_start_up() -> None:
    """Turns the collector off while the program starts (`main()`): importing modules
    makes long-lived objects (modules, classes, functions) and no garbage cycles, and
    the collector ran about 65 times over them while `validate` of the quickstart ran."""
    if gc.isenabled():  # (once: `python -m agentform` pauses it before main() does)
        _StartUp.paused = True
        gc.disable()


def start_up_done() -> None:
    """Ends a start-up paused by `pause_start_up`, once the command is imported: what
    it made is frozen out of every later collection (gc.freeze) and the collector runs
    again for the command. Nothing where start-up was not paused (tests that call the
    command group in their own process)."""
    if _StartUp.paused:
        _StartUp.paused = False
        gc.freeze()
        gc.enable()
