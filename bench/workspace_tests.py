"""Benchmark: `agentform test`, wall time per test, side by side in one run.

1. The quickstart's tests (examples/quickstart/tests/), each on a fresh service:
   wall and CPU seconds per test, next to a test of the same workspace that only
   applies it (no step), so the share of the apply shows. Target: under 2 s each.
2. A test of 100 executions with 3 attachments and 10 advances. Target: under
   5 s. Run twice: attachments taking the completion and failure events (300
   deliveries), and attachments taking every event (7,800 deliveries: the
   service's cost per delivery, a signature and its share of a batch's
   transactions, then rules).

CPU seconds next to wall seconds show the manual clock never sleeps: a test that
waited would take wall time with no CPU behind it (on a loaded machine the two
part for other reasons: the ratio of the runs to each other is the figure).

    .venv/bin/python bench/workspace_tests.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

from agentform.config.loader import load_workspace
from agentform.testing.files import discover, load_tests
from agentform.testing.results import CaseResult
from agentform.testing.runner import run_tests

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "examples" / "quickstart"

SCRIPT = """
          script:
            steps:
{steps}
            end: {{result: {{ok: true}}, reasoning: done, outcome: success}}"""
STEP = "              - {{message: 'step {n}', duration: 2}}"
BIG = """\
seed:
  organizations:
    - name: bench
      maxConcurrentExecutions: 200
      apiKeys: [{{name: admin, key: bench-admin-key, role: admin}}]
      agents:
        - name: worker{script}
tests:
  - name: 100 executions, 3 attachments, 10 advances
    steps:
{executes}
{advances}
      - expect:
          deliveries:
            - {{webhook: hook-1, events: {events}, status: delivered}}
"""
TYPICAL = "[EXECUTION_COMPLETED, EXECUTION_FAILED]"
EVERY = '["*"]'
EVERY_EVENT = (
    "[EXECUTION_STARTED, EXECUTION_STEP_STARTED, EXECUTION_MESSAGE_ADDED, "
    "EXECUTION_STEP_PROCESSED, EXECUTION_COMPLETED]"
)
HOOKS = """\
webhooks:
{hooks}
"""
HOOK = """\
  - name: hook-{n}
    url: https://hooks.example.com/{n}
    attachments:
      - {{agent: worker, eventRules: {rules}}}"""


def timed(root: Path, files: list[Path] | None = None) -> list[tuple[CaseResult, float]]:
    """Each test's result with its CPU seconds."""
    workspace = load_workspace(root)
    runs = load_tests(workspace, files or discover(root / "tests"))
    out: list[tuple[CaseResult, float]] = []
    last = time.process_time()

    def seen(case: CaseResult) -> None:
        nonlocal last
        now = time.process_time()
        out.append((case, now - last))
        last = now

    run_tests(workspace, runs, on_result=seen)
    return out


def quickstart(tmp: Path) -> float:
    root = tmp / "quickstart"
    shutil.copytree(QUICKSTART, root, ignore=shutil.ignore_patterns(".agentform"))
    (root / "tests" / "zz-apply-only.yaml").write_text(
        "tests:\n  - name: (apply only, no step)\n    steps: []\n"
    )
    print("1. the quickstart's tests (each: a fresh service, the apply, the steps)")
    print(f"   {'test':<78} {'wall s':>7} {'cpu s':>6}")
    worst = 0.0
    for case, cpu in timed(root):
        print(f"   {case.name[:78]:<78} {case.seconds:7.2f} {cpu:6.2f}  {case.outcome}")
        worst = max(worst, case.seconds)
    print(f"   slowest: {worst:.2f} s (target: under 2 s each)")
    return worst


def big(tmp: Path, rules: str, events: str) -> float:
    root = tmp / f"big-{len(rules)}"
    (root / "tests").mkdir(parents=True)
    (root / "agentform.yaml").write_text("workspace: bench\nendpoint: local\n")
    hooks = "\n".join(HOOK.format(n=n, rules=rules) for n in range(1, 4))
    (root / "hooks.yaml").write_text(HOOKS.format(hooks=hooks))
    executes = "\n".join("      - execute: {agent: worker}" for _ in range(100))
    advances = "\n".join("      - advance: 2s" for _ in range(10))
    script = SCRIPT.format(steps="\n".join(STEP.format(n=n) for n in range(1, 9)))
    text = BIG.format(script=script, executes=executes, advances=advances, events=events)
    (root / "tests" / "big.yaml").write_text(text)
    [(case, cpu)] = timed(root)
    print(f"   eventRules {rules}: wall {case.seconds:.2f} s, cpu {cpu:.2f} s, {case.outcome}")
    if case.outcome != "passed":
        print("   " + case.message.replace("\n", "\n   "))
    return case.seconds


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        worst = quickstart(Path(tmp))
        print("\n2. 100 executions of an 8-step script, 3 attachments, 10 advances (target: 5 s)")
        whole = big(Path(tmp), TYPICAL, "[EXECUTION_COMPLETED]")  # 300 deliveries
        big(Path(tmp), EVERY, EVERY_EVENT)  # 26 events an execution: 7,800 deliveries
    return 0 if worst < 2 and whole < 5 else 1


if __name__ == "__main__":
    sys.exit(main())
