"""The fast tier's processor time (docs/performance.md#the-test-suite): what each
xdist worker pays before its first test (start-up and collection), and with
`--run N`, the whole tier on N workers with each test's and each module's share.

Processor time (user + sys), not wall time: the machine is shared. A test's CPU is
getrusage of its worker (every thread, the loopback services' included) and of the
worker's waited-for children, summed around the test (setup, call, teardown); the
tier's total is pytest's own children (the workers and all they waited for).

    .venv/bin/python bench/suite_cpu.py           # start-up and collection, 3 rounds
    .venv/bin/python bench/suite_cpu.py --run 4   # the fast tier on 4 workers
    .venv/bin/python bench/suite_cpu.py --run 2 tests/test_canaries.py

Run as a pytest plugin (`-p suite_cpu`, bench/ on PYTHONPATH) it records the rows.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Generator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FAST = ["-m", "not slow and not pipeline", "--hypothesis-profile=fast", "-p", "no:schemathesis"]
GOAL_TIER = 170.0  # s of CPU: `make test-fast` under 90 s of wall on 2 idle cores
BEFORE_COLLECT = 6.6  # s of CPU a process paid to collect the fast tier before (12:50)
_ROWS: list[tuple[str, str, float]] = []


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    waited = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + waited.ru_utime + waited.ru_stime


def _hookwrapper(fn: Any) -> Any:
    import pytest

    return pytest.hookimpl(wrapper=True)(fn)


@_hookwrapper
def pytest_runtest_protocol(item: Any, nextitem: Any) -> Generator[None, object, object]:
    start = _cpu()
    result = yield
    _ROWS.append(("test", item.nodeid, _cpu() - start))
    return result


@_hookwrapper
def pytest_make_collect_report(collector: Any) -> Generator[None, object, object]:
    start = _cpu()
    result = yield
    if type(collector).__name__ == "Module":
        _ROWS.append(("collect", collector.nodeid, _cpu() - start))
    return result


def pytest_sessionfinish(session: Any) -> None:
    folder = os.environ.get("SUITE_CPU_OUT")
    if folder:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        lines = [f"{kind}\t{node}\t{cpu:.4f}\n" for kind, node, cpu in _ROWS]
        Path(folder, f"{worker}.tsv").write_text("".join(lines))


def _children_cpu(argv: list[str], env: dict[str, str] | None = None) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def collection(rounds: int) -> None:
    """One process's start-up and collection of the fast tier, against the floor of
    an interpreter importing pytest (min/median/max of `rounds`)."""
    pytest = [sys.executable, "-m", "pytest", "-q", "--collect-only", *FAST]
    floor = [sys.executable, "-c", "import pytest, xdist, hypothesis"]
    spent, floors = [], []
    for _ in range(rounds):
        spent.append(_children_cpu(pytest))
        floors.append(_children_cpu(floor))
    line = statistics.median(spent)
    print(f"collect the fast tier: {min(spent):.2f} / {line:.2f} / {max(spent):.2f} s CPU")
    ratio = line / statistics.median(floors)
    print(f"  ratio to importing pytest, xdist and hypothesis: {ratio:.1f}x")
    print(f"  goal: under the {BEFORE_COLLECT} s of before; every worker pays it")


def run(workers: int, paths: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "SUITE_CPU_OUT": folder}
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "bench"), env.get("PYTHONPATH", "")])
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as `make` runs it
        argv = [sys.executable, "-m", "pytest", "-q", "-n", str(workers), "--dist", "worksteal"]
        total = _children_cpu([*argv, *FAST, "-p", "suite_cpu", *paths], env)
        rows = [line.split("\t") for path in Path(folder).glob("*.tsv") for line in path.open()]
    collected = sum(float(cpu) for kind, _, cpu in rows if kind == "collect")
    modules: dict[str, float] = defaultdict(float)
    tests = sorted(((float(cpu), node) for kind, node, cpu in rows if kind == "test"), reverse=True)
    for cpu, node in tests:
        modules[node.split("::")[0]] += cpu
    print(f"fast tier on {workers} workers: {total:.1f} s CPU (goal <= {GOAL_TIER:.0f} s, idle)")
    print(f"  collection {collected:.1f} s, tests {sum(c for c, _ in tests):.1f} s")
    for name, cpu in sorted(modules.items(), key=lambda m: -m[1])[:15]:
        print(f"  {cpu:7.2f} s  {name}")
    for cpu, node in tests[:15]:
        print(f"  {cpu:7.2f} s  {node}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--run", type=int, metavar="WORKERS", help="run the fast tier")
    parser.add_argument("paths", nargs="*", help="with --run: these tests only")
    options = parser.parse_args()
    if options.run:
        run(options.run, options.paths)
    else:
        collection(options.rounds)
