"""Benchmark: what the budget costs (core/budget.py, core/budget_worker.py), side by
side in one run, each measured with the budget and with it taken away.

1. Loading a workspace (`validate`): the quickstart, and a workspace of 200 files of
   templates; each file is read under `metered()` (two setrlimit and four timer
   calls per file).
2. Rendering an agent's script: in the budget's warm worker (a pickled call over
   a pipe) and in the process, per render; and the worker's start.
3. `agentform test` on the quickstart's tests: every execution's script is
   rendered in the worker, or in the process.

    .venv/bin/python bench/budget.py
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from agentform.config import loader
from agentform.config.loader import load_workspace
from agentform.service.executions import script
from agentform.service.startup.seed_file import DEMO_SEED
from workspace_tests import QUICKSTART, timed


@contextlib.contextmanager
def unmetered() -> Iterator[None]:
    """The budget taken away: files read with no limit, scripts rendered here."""
    metered, templated = loader.metered, script._templated
    loader.metered = contextlib.nullcontext  # type: ignore[assignment]
    script._templated = lambda value: False
    try:
        yield
    finally:
        loader.metered, script._templated = metered, templated


def side_by_side(label: str, work: Callable[[], object], rounds: int = 5) -> None:
    with_budget, without = [], []
    for _ in range(rounds):
        for into, context in ((with_budget, contextlib.nullcontext()), (without, unmetered())):
            with context:
                started = time.perf_counter()
                work()
                into.append(time.perf_counter() - started)
    a, b = statistics.median(with_budget), statistics.median(without)
    print(f"{label}: {a * 1000:8.1f} ms with the budget, {b * 1000:8.1f} ms without ({a / b:.2f}x)")


def many_files(root: Path, count: int = 200) -> Path:
    (root / "agentform.yaml").write_text("workspace: many\nvars: {region: eu}\n")
    for n in range(count):
        (root / f"pools-{n:03d}.yaml").write_text(
            f"profilePools:\n  - name: pool-{n}-{{{{ vars.region }}}}\n"
            f"    members: [{{% for i in range(3) %}}bot-{{{{ i }}}},{{% endfor %}}]\n"
        )
    return root


def main() -> None:
    side_by_side("load the quickstart       ", lambda: load_workspace(QUICKSTART))
    with tempfile.TemporaryDirectory() as folder:
        root = many_files(Path(folder))
        side_by_side("load 200 templated files  ", lambda: load_workspace(root))
    scripts = [a.script for o in DEMO_SEED.organizations for a in o.agents if a.script]
    started = time.perf_counter()
    script.render(scripts[0], {})
    print(f"the worker's start (once per process): {(time.perf_counter() - started) * 1000:.0f} ms")
    renders = 200

    def render_all() -> None:
        for n in range(renders):
            script.render(scripts[n % len(scripts)], {})

    side_by_side(f"render {renders} demo scripts     ", render_all)
    calls = 0
    call = script._WORKER.call

    def counted(*args: object, **kwargs: object) -> object:
        nonlocal calls
        calls += 1
        return call(*args, **kwargs)  # type: ignore[arg-type]

    script._WORKER.call = counted  # type: ignore[method-assign]
    side_by_side("agentform test (quickstart)", lambda: timed(QUICKSTART), rounds=3)
    print(f"  ({calls // 3} scripts rendered in the worker per run of the quickstart's tests)")


if __name__ == "__main__":
    main()
