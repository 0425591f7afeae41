"""Benchmark: start-up of a command that uses little.

Printed side by side, measured in this one run, each the median of ROUNDS fresh
processes run in turn (so the machine's load falls on both alike), as processor
time (user and system, what the process itself spent: steady on a shared machine)
and as wall time:
- the import line: `python -c "import httpx, pydantic, yaml, jinja2, click"`, what
  any program on these libraries pays before it does anything;
- `agentform validate` of examples/quickstart (it needs pydantic, yaml, jinja2 and
  click, and never httpx, rich, vcrpy or the service);
- `agentform --version`, `agentform --help` (it imports every command to list
  them), and `agentform plan` of a copy of examples/quickstart (its endpoint is
  local: the plan starts the in-process service), printed for reference;
and the ratio of validate to the import line, next to the 1.5x target (judged on
processor time; the wall-time ratio is printed beside it).

    python bench/startup.py [ROUNDS] [--instructions]

With --instructions (valgrind installed), also the instructions each command
executes, counted by cachegrind: the same on a loaded machine as on an idle one, so
a change of a few percent shows, where processor times move by more than that
between runs.

Each process may write its bytecode cache (PYTHONDONTWRITEBYTECODE is dropped from
its environment), as an installed package has one: the libraries of the import line
were compiled when they were installed, and agentform's modules are compiled by the
warm-up run, so both are read from bytecode.

The machine is shared: compare the ratios of one run, not times across runs.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "examples" / "quickstart"
TARGET = 1.5
COMMANDS = {
    "import line": [sys.executable, "-c", "import httpx, pydantic, yaml, jinja2, click"],
    "validate": [sys.executable, "-m", "agentform", "validate", "-C", str(QUICKSTART)],
    "--version": [sys.executable, "-m", "agentform", "--version"],
    "--help": [sys.executable, "-m", "agentform", "--help"],
}


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def once(argv: list[str]) -> tuple[float, float]:
    """The processor and wall seconds of one run of `argv`."""
    cpu, wall = children_cpu(), time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, cwd=ROOT, env=ENV)
    return children_cpu() - cpu, time.perf_counter() - wall


def main(rounds: int) -> None:
    for argv in COMMANDS.values():
        once(argv)  # warm the file cache, write the bytecode
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in COMMANDS}
    for _ in range(rounds):
        for name, argv in COMMANDS.items():
            runs[name].append(once(argv))
    cpu = {name: statistics.median(c for c, _ in found) for name, found in runs.items()}
    wall = {name: statistics.median(w for _, w in found) for name, found in runs.items()}
    for name in COMMANDS:
        print(
            f"{name:12} processor {cpu[name] * 1000:5.0f} ms "
            f"{cpu[name] / cpu['import line']:4.2f}x   "
            f"wall {wall[name] * 1000:5.0f} ms {wall[name] / wall['import line']:4.2f}x"
        )
    ratio = cpu["validate"] / cpu["import line"]
    verdict = "within" if ratio <= TARGET else "OVER"
    print(f"validate / import line: {ratio:.2f}x processor time ({verdict} the {TARGET}x target)")


def instructions(argv: list[str]) -> int:
    """The instructions one run of `argv` executes in user space (cachegrind's I refs)."""
    valgrind = ["valgrind", "--tool=cachegrind", "--cache-sim=no"]
    valgrind.append("--cachegrind-out-file=/dev/null")
    counted = subprocess.run(
        [*valgrind, *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=ENV,
        check=True,
    )
    found = re.search(r"I\s+refs:\s+([\d,]+)", counted.stderr)
    assert found, counted.stderr[-500:]
    return int(found.group(1).replace(",", ""))


def count_instructions() -> None:
    if shutil.which("valgrind") is None:
        print("(valgrind is not installed: no instruction counts)")
        return
    counts = {name: instructions(argv) for name, argv in COMMANDS.items()}
    for name, count in counts.items():
        ratio = count / counts["import line"]
        print(f"{name:12} {count / 1e6:7.0f} M instructions {ratio:4.2f}x")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--instructions"]
    with tempfile.TemporaryDirectory() as scratch:  # plan writes the service's state
        workspace = Path(scratch) / "quickstart"
        shutil.copytree(QUICKSTART, workspace, ignore=shutil.ignore_patterns(".agentform"))
        COMMANDS["plan"] = [sys.executable, "-m", "agentform", "plan", "-C", str(workspace)]
        main(int(args[0]) if args else 15)
        if "--instructions" in sys.argv:
            count_instructions()
