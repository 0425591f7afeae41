"""How many CPUs this process may run on: the one count both halves size their
parallel work by (`affected`'s forked comparisons, `service run`'s delivery
workers). The affinity mask, not the machine's count: a container or `taskset`
limited to 2 of 64 cores gets 2."""

from __future__ import annotations

import os


def usable_cpus() -> int:
    """The CPUs this process may be scheduled on, at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)  # macOS and Windows have no affinity mask
