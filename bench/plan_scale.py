"""Benchmark: plan workspaces of 1,000 and 10,000 declared pools and groups (half
each, two members each) against the service on loopback, live state in sync.

Prints per size: wall time of the plan, HTTP calls made next to the minimum
(ceil(N/100) per collection + one members call per pool or group + /context),
peak Python memory of the planning process, and the ratio plan(10k)/plan(1k).

Then the markdown view of a 10,000-change plan (the plan of the 10,000 pools and
groups against an empty service): time and size of the whole document and of the
document cut at GitHub's 65,536-character comment limit, side by side.
"""

from __future__ import annotations

import asyncio
import math
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _server import KEY, service
from agentform.api.client import ApiClient
from agentform.config.loader import load_workspace
from agentform.engine.apply import apply_plan
from agentform.engine.model import Plan
from agentform.engine.planner import make_plan
from agentform.output.markdown import GITHUB_LIMIT, MarkdownView
from agentform.output.text import TextView

SIZES = (1_000, 10_000)


def write_workspace(root: Path, n: int) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "agentform.yaml").write_text("workspace: scale\n")
    for kind, prefix in (("profilePools", "pool"), ("profileGroups", "group")):
        lines = [f"{kind}:"]
        for i in range(n // 2):
            a, b = i % 6 + 1, (i + 1) % 6 + 1
            lines.append(
                f"  - {{name: {prefix}-{i:05d}, allowConcurrentUse: false, "
                f"members: [bot-{a}, bot-{b}]}}"
            )
        (root / f"{kind}.yaml").write_text("\n".join(lines) + "\n")


class Counting(ApiClient):
    calls = 0

    async def request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        Counting.calls += 1
        return await super().request(*args, **kwargs)


async def populate(base: str, root: Path) -> None:
    workspace = load_workspace(root)
    async with ApiClient(base, KEY, concurrency=8) as api:
        report = await apply_plan(await make_plan(workspace, api, base), api, parallelism=8)
        assert report.ok


async def timed_plan(base: str, root: Path, trace: bool) -> tuple[float, int, int]:
    """Wall time and calls of one plan; with `trace`, its peak memory (tracemalloc slows
    the run, so the time of a traced run is not reported)."""
    workspace = load_workspace(root)
    Counting.calls = 0
    if trace:
        tracemalloc.start()
    start = time.perf_counter()
    async with Counting(base, KEY, concurrency=8) as api:
        plan = await make_plan(workspace, api, base)
    wall = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] if trace else 0
    tracemalloc.stop()
    assert not plan.has_changes, plan.summary
    return wall, Counting.calls, peak


async def plan_only(base: str, root: Path) -> Plan:
    async with ApiClient(base, KEY, concurrency=8) as api:
        return await make_plan(load_workspace(root), api, base)


def best_of(runs: int, render: object) -> tuple[float, str]:
    """The fastest of `runs` renderings (seconds) and the text."""
    times, text = [], ""
    for _ in range(runs):
        start = time.perf_counter()
        text = render()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times), text


def markdown_bench(n: int = 10_000) -> None:
    with tempfile.TemporaryDirectory() as tmp, service(Path(tmp) / "svc.db") as base:
        root = Path(tmp) / "ws"
        write_workspace(root, n)
        plan = asyncio.run(plan_only(base, root))
    assert len(plan.changes) == n, plan.summary
    text_time, text = best_of(3, lambda: TextView().plan(plan))
    whole_time, whole = best_of(3, lambda: MarkdownView(limit=None).plan(plan))
    cut_time, cut = best_of(3, lambda: MarkdownView().plan(plan))
    assert len(cut) <= GITHUB_LIMIT < len(whole)
    shown = cut.count("\n+ ")
    print(f"markdown of a {n:,}-change plan:")
    print(f"  text view (reference) {text_time * 1000:7.1f} ms | {len(text):>10,} chars")
    print(f"  markdown, whole       {whole_time * 1000:7.1f} ms | {len(whole):>10,} chars")
    print(
        f"  markdown, cut         {cut_time * 1000:7.1f} ms | {len(cut):>10,} chars "
        f"(limit {GITHUB_LIMIT:,}; {shown:,} changes shown, {n - shown:,} left out)"
    )
    print(f"  ratio cut/whole: time {cut_time / whole_time:.2f}, size {len(cut) / len(whole):.3f}")


def main() -> None:
    markdown_bench()
    walls = {}
    for n in SIZES:
        with tempfile.TemporaryDirectory() as tmp, service(Path(tmp) / "svc.db") as base:
            root = Path(tmp) / "ws"
            write_workspace(root, n)
            t = time.perf_counter()
            asyncio.run(populate(base, root))
            fill = time.perf_counter() - t
            _, _, peak = asyncio.run(timed_plan(base, root, trace=True))
            wall, calls, _ = asyncio.run(timed_plan(base, root, trace=False))
            half = n // 2
            minimum = 1 + 2 * math.ceil(half / 100) + n + 2  # context, pools, groups, members,
            # profiles and vault templates (one page each here)
            walls[n] = wall
            print(
                f"N={n:>6}: plan {wall:6.2f} s | HTTP calls {calls} (minimum {minimum}) | "
                f"peak memory {peak / 2**20:6.1f} MiB | (populating took {fill:.0f} s)"
            )
    print(
        f"ratio plan(10k)/plan(1k): {walls[SIZES[1]] / walls[SIZES[0]]:.1f} "
        f"(linear would be {SIZES[1] / SIZES[0]:.0f})"
    )


if __name__ == "__main__":
    main()
