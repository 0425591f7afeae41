"""Benchmark: environments, offline.

Printed side by side, measured in this one run:
- `agentform env diff staging prod` of a workspace of 10,000 objects (5,000 pools
  and 5,000 groups, every name and member rendered from the environment's vars,
  one object in a hundred differing by env_name): its wall time next to the
  2-second target and next to one load of one environment (the diff loads three:
  A, B, and B under A's name);
- `agentform validate` of the same files with 5 environments declared next to the
  same files with 1: the ratio, next to the 5x target.

The machine is shared: compare the ratios of one run, not times across runs.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
from _tools import timed
from agentform.cli.main import cli
from agentform.config.loader import load_workspace

OBJECTS = 10_000
ROUNDS = 3


def write_workspace(root: Path, environments: int, shape: str = "loops") -> None:
    """10,000 objects whose names and members come from the environment's vars:
    written by two loops ("loops", how a large workspace is written), or each on a
    line of its own with its own expressions ("lines": 30,000 expressions for Jinja2
    to compile, once per process)."""
    names = ["staging", "prod", "qa", "dev", "eu"][:environments]
    lines = ["workspace: bench", "endpoint: local", "vars: {team: bench}", "environments:"]
    for i, name in enumerate(names):
        lines += [f"  {name}:", f"    vars: {{size: {i + 1}, region: r{i}}}"]
    (root / "agentform.yaml").write_text("\n".join(lines) + "\n")
    half = OBJECTS // 2
    if shape == "loops":
        (root / "pools.yaml").write_text(
            "profilePools:\n{% for i in range(%d) %}\n"
            "  - {name: 'p{{ i }}', members: [bot-{{ vars.size }}], "
            "allowConcurrentUse: {{ 'true' if env_name == 'prod' and i %% 100 == 0 "
            "else 'false' }}}\n{%% endfor %%}\n".replace("%d", str(half)).replace("%%", "%")
        )
        (root / "groups.yaml").write_text(
            "profileGroups:\n{% for i in range(" + str(half) + ") %}\n"
            "  - {name: 'g{{ i }}', members: [bot-{{ vars.size }}]}\n{% endfor %}\n"
        )
        return
    pools = ["profilePools:"]
    pools += [
        f"  - {{name: 'p{i}-{{{{ vars.region }}}}', members: [bot-{{{{ vars.size }}}}], "
        f"allowConcurrentUse: {{{{ 'true' if env_name == 'prod' and {i} % 100 == 0 "
        "else 'false' }}}"
        for i in range(half)
    ]
    (root / "pools.yaml").write_text("\n".join(pools) + "\n")
    groups = ["profileGroups:"]
    groups += [f"  - {{name: 'g{i}', members: [bot-{{{{ vars.size }}}}]}}" for i in range(half)]
    (root / "groups.yaml").write_text("\n".join(groups) + "\n")


def best(fn: Callable[[], object]) -> tuple[float, float]:
    """The fastest of ROUNDS runs: (wall, CPU) seconds. The first run, which compiles
    the templates (once per process), is one of them only when ROUNDS is 1."""
    runs = []
    for _ in range(ROUNDS):
        with timed() as t:
            fn()
        runs.append((t.wall, t.cpu))
    return min(runs)


def run(*args: str) -> int:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code


def measure(shape: str, tmp: Path) -> None:
    two, one, five = (tmp / f"{shape}-{n}" for n in (2, 1, 5))
    for root, n in ((two, 2), (one, 1), (five, 5)):
        root.mkdir()
        write_workspace(root, n, shape)
    with timed() as first:  # compiles the templates of the files: once per process
        assert run("-C", str(two), "env", "diff", "staging", "prod") == 2
    load = best(lambda: load_workspace(two, environment="staging", unset_secrets_allowed=True))
    diff = best(lambda: run("-C", str(two), "env", "diff", "staging", "prod"))
    met = "met" if diff[0] < 2 else "met in CPU, not wall" if diff[1] < 2 else "MISSED"
    print(f"{shape}: env diff, 2 environments x {OBJECTS:,} objects (wall / CPU):")
    print(f"  env diff               {diff[0]:6.2f} s / {diff[1]:5.2f} s   target < 2 s ({met})")
    print(f"  one environment loaded {load[0]:6.2f} s / {load[1]:5.2f} s   (the diff loads 3)")
    print(f"  first env diff         {first.wall:6.2f} s / {first.cpu:5.2f} s   (compiles)")
    v1 = best(lambda: run("-C", str(one), "validate"))
    v5 = best(lambda: run("-C", str(five), "validate"))
    ratio = v5[1] / v1[1]
    verdict = "met" if ratio <= 5 else "MISSED"
    print(f"{shape}: validate of {OBJECTS:,} objects (wall / CPU):")
    print(f"  1 environment          {v1[0]:6.2f} s / {v1[1]:5.2f} s")
    print(f"  5 environments         {v5[0]:6.2f} s / {v5[1]:5.2f} s   {ratio:.2f}x CPU, "
          f"target <= 5x ({verdict})")  # fmt: skip


def main() -> None:
    print(f"best of {ROUNDS} rounds each; the machine is shared: compare within this run")
    with tempfile.TemporaryDirectory() as tmp:
        for shape in ("loops", "lines"):
            measure(shape, Path(tmp))


if __name__ == "__main__":
    main()
