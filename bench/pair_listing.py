"""Benchmark: what one pair job of the repository pipeline (examples/gitops) loads
to read its own pair, on bench/affected.py's repository of N workspaces x 2
environments (`.venv/bin/python bench/pair_listing.py [N]`, default 100).

Before, each of the 2N pair jobs ran `list --all`, loading every pair of the
repository (2N x 2N loads in all); now it runs `list --all WORKSPACE --env NAME`,
which loads its own pair. Printed side by side, rounds interleaved, CPU time of the
child process (the machine is shared: compare the ratio of one run): the goal is
that a pair job's listing costs about one process start, whatever N is.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import affected
from affected import BIN, write

ROUNDS = 3


def cpu(root: Path, *args: str) -> float:
    """The CPU seconds of one `agentform ARGS` run from the repository's root."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [str(BIN), "-C", "teams/team-000", *args], cwd=root, capture_output=True, text=True
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main(workspaces: int) -> None:
    affected.WORKSPACES = workspaces
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        write(root)
        every, own = [], []
        for _ in range(ROUNDS):
            every.append(cpu(root, "list", "--all", "--format", "json"))
            own.append(
                cpu(root, "list", "--all", "teams/team-000", "--env", "prod", "--format", "json")
            )
    shown = "/".join(f"{x:.2f}" for x in (min(every), statistics.median(every), max(every)))
    print(f"{workspaces} workspaces x 2 environments, CPU s min/median/max of {ROUNDS}:")
    print(f"  list --all (every pair, before):        {shown}")
    shown = "/".join(f"{x:.2f}" for x in (min(own), statistics.median(own), max(own)))
    print(f"  list --all WORKSPACE --env NAME (now):  {shown}")
    ratio = statistics.median(every) / statistics.median(own)
    print(f"  a pair job's listing: {ratio:.1f}x less CPU; over the {2 * workspaces} pair jobs,")
    print(
        f"  {2 * workspaces * statistics.median(every):.0f} s before, "
        f"{2 * workspaces * statistics.median(own):.0f} s now (goal: the repository loaded once)"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
