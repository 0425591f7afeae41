"""Benchmark: the template fuzzer with many examples under the real budget.

Templates composed by hypothesis from what the sandbox allows (tests/template_fuzz.py)
are validated one by one in a forked child, measured from outside (wait4): how many
were tried, how they ended (valid, diagnostics by kind, crashes), and the largest
peak memory growth and processor time any took, next to the budget's values.

    .venv/bin/python bench/template_fuzz.py [EXAMPLES]     (default 500)
"""

from __future__ import annotations

import collections
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings

sys.path.insert(0, str(Path(__file__).parents[1]))
from tests.template_fuzz import Harness, Verdict, templates

from agentform.core import bounds


def kind_of(verdict: Verdict) -> str:
    if verdict.outcome != "diagnostics":
        return verdict.outcome
    said = verdict.said.split(": error: ", 1)[-1]
    for words in ("memory a file may use", "processor time", "wall-clock time"):
        if words in said:
            return f"budget: {words}"
    return "refused: " + said.split(":")[0][:50]


def main() -> None:
    examples = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    memory, cpu = bounds.BUDGET_MEMORY, bounds.BUDGET_CPU_SECONDS
    harness = Harness(memory, cpu, bounds.BUDGET_WALL_SECONDS)
    seen: list[tuple[str, Verdict]] = []

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(template=templates())
    def tried(template: str) -> None:
        seen.append((template, harness.validate(template)))

    started = time.perf_counter()
    tried()
    took = time.perf_counter() - started
    harness.close()
    kinds = collections.Counter(kind_of(v) for _, v in seen)
    print(f"{len(seen)} templates in {took:.0f} s ({took / len(seen) * 1000:.0f} ms each)")
    for kind, count in kinds.most_common(12):
        print(f"  {count:5d}  {kind}")
    grown = max(seen, key=lambda s: s[1].grown)
    slow = max(seen, key=lambda s: s[1].cpu)
    print(f"largest memory growth: {grown[1].grown >> 20} MiB (budget {memory >> 20} MiB)")
    print(f"  {grown[0][:100]}")
    print(f"most processor time: {slow[1].cpu:.2f} s (budget {cpu:g} s)\n  {slow[0][:100]}")
    crashes = [(t, v) for t, v in seen if v.outcome.startswith("crash")]
    over = [(t, v) for t, v in seen if v.grown > memory or v.cpu > cpu + 1]
    print(f"crashes: {len(crashes)}; over the budget: {len(over)}")
    for template, verdict in (crashes + over)[:10]:
        print(f"  {template[:120]}\n    -> {verdict}")


if __name__ == "__main__":
    main()
