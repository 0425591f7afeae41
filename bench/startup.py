"""Benchmark: start-up of a command that uses little.

Printed side by side, measured in this one run, each the median of ROUNDS fresh
processes run in turn (so the machine's load falls on both alike):
- the import line: `python -c "import httpx, pydantic, yaml, jinja2, click"`, what
  any program on these libraries pays before it does anything;
- `agentform validate` of examples/quickstart (it needs pydantic, yaml, jinja2 and
  click, and never httpx, rich, vcrpy or the service);
- `agentform --version`;
and the ratio of validate to the import line, next to the 1.5x target.

    python bench/startup.py [ROUNDS]

The machine is shared: compare the ratios of one run, not times across runs.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "examples" / "quickstart"
TARGET = 1.5
COMMANDS = {
    "import line": [sys.executable, "-c", "import httpx, pydantic, yaml, jinja2, click"],
    "validate": [sys.executable, "-m", "agentform", "validate", "-C", str(QUICKSTART)],
    "--version": [sys.executable, "-m", "agentform", "--version"],
}


def once(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, cwd=ROOT)
    return time.perf_counter() - started


def main(rounds: int) -> None:
    for argv in COMMANDS.values():
        once(argv)  # warm the file cache
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(rounds):
        for name, argv in COMMANDS.items():
            times[name].append(once(argv))
    median = {name: statistics.median(found) for name, found in times.items()}
    floor = median["import line"]
    for name, seconds in median.items():
        print(f"{name:12} {seconds * 1000:7.0f} ms  {seconds / floor:4.2f}x the import line")
    ratio = median["validate"] / floor
    verdict = "within" if ratio <= TARGET else "OVER"
    print(f"validate / import line: {ratio:.2f}x ({verdict} the {TARGET}x target)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
