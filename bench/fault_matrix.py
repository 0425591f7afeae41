"""Benchmark: the write path under faults, seed by seed (issue 20).

For each of 12 seeds, on a fresh embedded service on loopback: a workspace of
~160 changes of all five kinds (creates, updates, replaces, cancels, deletes) is
applied once through tests/fault_proxy.py at 10% 429, 5% 503, 2% dropped
connections, 1% answers lost after the write landed and 1.5% held past the
client's timeout (tests/fault_matrix.py). Printed per seed, then in sum: whether
that one apply converged (a plan made directly afterwards has nothing to do),
the exit code `agentform apply` gives its report, and how many changes that
landed were reported failed. Goal: 12/12 converged, exit 0 whenever converged,
0 landed reported failed.

`PYTHONPATH=/path/to/another/checkout/src python bench/fault_matrix.py` measures
that code with the same matrix, to compare.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))
from tests.fault_matrix import run_seed

import agentform

SEEDS = range(int(sys.argv[1]) if len(sys.argv) > 1 else 12)


def main() -> None:
    print(f"agentform from {Path(agentform.__file__).parent}")
    converged = landed_failed = wrong_exit = 0
    exits = []
    for seed in SEEDS:
        started = time.perf_counter()
        with tempfile.TemporaryDirectory() as folder:
            outcome = run_seed(seed, Path(folder))
        converged += outcome.converged
        landed_failed += len(outcome.landed_reported_failed)
        wrong_exit += outcome.converged and outcome.exit_code != 0
        exits.append(outcome.exit_code)
        faults = sum(outcome.injected.values())
        print(
            f"seed {seed:2}: {outcome.changes} changes, {faults} faults, "
            f"converged {'yes' if outcome.converged else 'NO '}, exit {outcome.exit_code}, "
            f"landed reported failed {len(outcome.landed_reported_failed)}, "
            f"failed {len(outcome.failures)} ({time.perf_counter() - started:.1f} s)",
            flush=True,
        )
        for change, why in outcome.failures:
            print(f"         {change}: {why}")
    print(
        f"converged after one apply: {converged}/{len(SEEDS)}; exit codes {exits}; "
        f"exit 1 although converged: {wrong_exit}; landed reported failed: {landed_failed}"
    )


if __name__ == "__main__":
    main()
