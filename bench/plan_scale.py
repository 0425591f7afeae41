"""Benchmark: plan workspaces of 1,000 and 10,000 declared pools and groups (half
each, two members each) against `agentform service run` on loopback, live state
in sync, at 0 and 20 ms of injected latency per request.

Printed side by side, measured in this one run:
- the plan's wall time next to the latency floor for the concurrency it reached
  (requests x latency / peak window), and next to a bare httpx loop making the
  same requests with as many in flight (no paging order, no planning), and next
  to the service's CPU time for them (one process on the same cores: a floor of
  its own, above the latency floor on a 2-core machine at 10k); with the
  service's time taken out (answers replayed), also next to a bare asyncio.sleep
  loop of as many waits (the floor as this machine's timers reach it at the time:
  a loaded machine wakes a process late);
- HTTP calls next to the minimum;
- client CPU per request (the whole plan: requests, decoding, diffing) next to
  the service's (its process's CPU over the same requests), and the bare loop's;
- the same ratio on an idle core, modelled (`_idle_core.py`: the process's CPU
  time plus its waits, rounded up as epoll sleeps), which a loaded machine
  leaves as an idle one measures it;
- workspace load time with libyaml's parser and with the pure-Python one;
- CLI start-up: `agentform --version`, `agentform validate` on a small workspace,
  next to `python -c pass`.

- the markdown view of a 10,000-change plan (the 10,000 pools and groups against an
  empty service): time and size of the whole document and of the document cut at
  GitHub's 65,536-character comment limit, next to the text view.

The machine is shared: compare the ratios of one run, not times across runs.

`--quick` prints only the figure of the goal (plan / bare asyncio.sleep loop, the
service's time replayed away, at 20 ms, 1k and 10k): the same measurement as the
default's, without the other figures (start-up, markdown, workspace load, the
real-service and 0 ms lines, the bare httpx loop), in about a third of the time.
"""

from __future__ import annotations

import asyncio
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _idle_core import LoopClock, on_idle_core
from _server import KEY, Running, running_service
from _tools import Delayed, Replay, bare_loop, timed, timer_floor
from agentform.api.client import ApiClient
from agentform.api.transport import ConnectionShards
from agentform.config.loader import load_workspace
from agentform.core import yamlpos
from agentform.engine.apply import apply_plan
from agentform.engine.model import Plan
from agentform.engine.planner import make_plan
from agentform.output.markdown import MarkdownView
from agentform.output.markdown_document import GITHUB_LIMIT
from agentform.output.text import TextView

SIZES = (1_000, 10_000)
LATENCIES = (0.0, 0.020)
PARALLELISM = 16


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


async def populate(base: str, root: Path) -> None:
    workspace = load_workspace(root)
    async with ApiClient(base, KEY, concurrency=PARALLELISM) as api:
        plan = await make_plan(workspace, api, base)
        report = await apply_plan(plan, api, parallelism=PARALLELISM)
        assert report.ok


async def planned(
    svc: Running, root: Path, latency: float, replay: Replay | None = None, clock: Any = None
) -> dict[str, Any]:
    workspace = load_workspace(root)
    transport = Delayed(replay or ConnectionShards(PARALLELISM), latency if not replay else 0)
    transport.answers = {} if latency == 0 and not replay else None
    service_before = svc.cpu()
    loop = asyncio.get_running_loop()
    start = loop.time()  # the wall on a real loop; the modelled one on _idle_core's
    with timed() as t:
        async with ApiClient(
            svc.base, KEY, transport=transport, concurrency=PARALLELISM, clock=clock
        ) as api:
            plan = await make_plan(workspace, api, svc.base)
    assert not plan.has_changes, plan.summary
    return {
        "loop": loop.time() - start,
        "wall": t.wall,
        "cpu": t.cpu,
        "service_cpu": svc.cpu() - service_before,
        "calls": api.sent,
        "peak": api.concurrency.peak_limit,
        "mean": api.concurrency.mean_in_flight(),
        "requests": transport.requests,
        "answers": transport.answers,
    }


def load_times(root: Path) -> dict[str, tuple[float, float]]:
    """(wall, CPU) seconds to load the workspace with libyaml, then with the pure-Python
    parser (best of 3 and 1 runs)."""
    timings = {}
    saved = yamlpos.FAST_LOADER
    for name, loader in (("libyaml", saved), ("pure-Python", yamlpos.PURE_LOADER)):
        yamlpos.FAST_LOADER = loader
        try:
            runs = []
            for _ in range(3 if loader is saved else 1):
                with timed() as t:
                    load_workspace(root)
                runs.append((t.wall, t.cpu))
        finally:
            yamlpos.FAST_LOADER = saved
        timings[name] = min(runs)
    return timings


def startup_times(small: Path) -> dict[str, float]:
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "agentform --version": [sys.executable, "-m", "agentform", "--version"],
        "agentform validate": [sys.executable, "-m", "agentform", "validate", "-C", str(small)],
    }
    out = {}
    for name, command in commands.items():
        runs = []
        for _ in range(5):
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            runs.append(time.perf_counter() - start)
        out[name] = statistics.median(runs)
    return out


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
    with tempfile.TemporaryDirectory() as tmp, running_service(Path(tmp) / "svc.db") as svc:
        root = Path(tmp) / "ws"
        write_workspace(root, n)
        plan = asyncio.run(plan_only(svc.base, root))
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


@contextmanager
def recorded(tmp: str, n: int) -> Iterator[tuple[Running, Path, dict[tuple[str, str], Any]]]:
    """A started service holding a workspace of `n` objects (in `tmp`), the workspace's
    root, and the answers of one plan of it at 0 ms (which also warms both sides up)."""
    root = Path(tmp) / "ws"
    write_workspace(root, n)
    with running_service(Path(tmp) / "svc.db") as svc:
        asyncio.run(populate(svc.base, root))
        yield svc, root, asyncio.run(planned(svc, root, 0.0))["answers"]


def quick() -> None:
    """The goal's figure alone: the same workspaces, service and replayed rounds as
    `main`'s, recorded from one plan at 0 ms."""
    for n in SIZES:
        with tempfile.TemporaryDirectory() as tmp, recorded(tmp, n) as (svc, root, answers):
            for latency in LATENCIES[1:]:
                replayed(svc, root, n, latency, answers)


def main() -> None:
    markdown_bench()
    walls: dict[tuple[int, float], float] = {}
    for n in SIZES:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "ws"
            write_workspace(root, n)
            loads = load_times(root)
            (fast, fast_cpu), (pure, pure_cpu) = loads["libyaml"], loads["pure-Python"]
            print(
                f"N={n:>6}: workspace load {fast:.3f} s ({fast_cpu:.3f} s CPU) with libyaml, "
                f"{pure:.3f} s ({pure_cpu:.3f} s CPU) pure-Python ({pure / fast:.1f}x)"
            )
            with running_service(Path(tmp) / "svc.db") as svc:
                t = time.perf_counter()
                asyncio.run(populate(svc.base, root))
                print(f"          (populating took {time.perf_counter() - t:.0f} s)")
                asyncio.run(planned(svc, root, 0.0))  # warm up both sides
                answers: dict[tuple[str, str], tuple[int, bytes]] = {}
                for latency in LATENCIES:
                    run = asyncio.run(planned(svc, root, latency))
                    answers = run["answers"] or answers
                    walls[(n, latency)] = run["wall"]
                    report(n, latency, run)
                for latency in LATENCIES[1:]:
                    replayed(svc, root, n, latency, answers)
    for latency in LATENCIES:
        ratio = walls[(SIZES[1], latency)] / walls[(SIZES[0], latency)]
        print(f"ratio plan(10k)/plan(1k) at {latency * 1000:.0f} ms: {ratio:.1f} (linear: 10)")


ROUNDS = 3
SLEEP_GOAL = 1.05


def replayed(
    svc: Running, root: Path, n: int, latency: float, answers: dict[tuple[str, str], Any]
) -> None:
    """The plan with the service's own time taken out (its answers replayed from
    memory), next to the latency floor and, ROUNDS times in turn, next to a bare
    asyncio.sleep loop of as many waits at the same concurrency: min/median/max."""
    ratios, floors, cpus = [], [], []
    for _ in range(ROUNDS):
        run = asyncio.run(planned(svc, root, latency, Replay(answers, latency)))
        floor = run["calls"] * latency / run["peak"]
        timers = asyncio.run(timer_floor(run["calls"], int(run["peak"]), latency))
        ratios.append(run["wall"] / timers)
        floors.append(run["wall"] / floor)
        cpus.append(run["cpu"] / run["calls"] * 1e6)
    spread = "/".join(f"{f(ratios):.3f}" for f in (min, statistics.median, max))
    modelled = []
    for _ in range(ROUNDS):
        replay = Replay(answers, latency)
        run, _ = on_idle_core(planned(svc, root, latency, replay, LoopClock()))
        _, timers = on_idle_core(timer_floor(run["calls"], int(run["peak"]), latency))
        modelled.append(run["loop"] / timers)
    print(
        f"N={n:>6} {latency * 1000:2.0f} ms, the service's own time taken out (its answers "
        f"replayed from memory), {ROUNDS} rounds: plan / bare asyncio.sleep loop of the same "
        f"calls and concurrency (min/median/max) {spread} (goal {SLEEP_GOAL}x) | plan / "
        f"latency floor at {run['peak']:.0f}: median {statistics.median(floors):.2f}x | client "
        f"CPU per request (the whole plan) {statistics.median(cpus):.0f} us"
    )
    print(
        "          the same on an idle core, modelled (CPU time plus waits rounded up to "
        "epoll's ms, _idle_core.py; the machine's load left out): "
        + "/".join(f"{f(modelled):.3f}" for f in (min, statistics.median, max))
    )


def report(n: int, latency: float, run: dict[str, Any]) -> None:
    calls, peak = run["calls"], run["peak"]
    half = n // 2
    minimum = 1 + 2 * math.ceil(half / 100) + n + 4  # context, pools, groups, members,
    # profiles, vault templates, webhook integrations and batches (one page each here)
    bare = asyncio.run(bare_loop(KEY, run["requests"], int(peak), latency))
    ms = latency * 1000
    line = (
        f"N={n:>6} {ms:2.0f} ms: plan {run['wall']:6.2f} s | calls {calls} (minimum {minimum})"
        f" | in flight: peak {peak:.0f}, mean {run['mean']:.1f}"
    )
    if latency:
        floor = calls * latency / peak
        line += f" | floor at {peak:.0f}: {floor:.2f} s -> {run['wall'] / floor:.2f}x"
        # the service is one process on this machine: its CPU time is a floor too
        busy = run["service_cpu"]
        line += (
            f" | service CPU {busy:.2f} s -> plan / the higher floor "
            f"{run['wall'] / max(floor, busy):.2f}x"
        )
    line += f" | bare httpx loop: {bare.wall:.2f} s -> {run['wall'] / bare.wall:.2f}x"
    if bare.extra["retried"]:
        line += f" ({bare.extra['retried']:.0f} of its reads sent again)"
    print(line)
    if not latency:
        client, service = run["cpu"] / calls * 1000, run["service_cpu"] / calls * 1000
        print(
            f"          CPU per request: agentform {client:.3f} ms (the whole plan), "
            f"service {service:.3f} ms -> {client / service:.2f}x; bare httpx loop "
            f"{bare.cpu / len(run['requests']) * 1000:.3f} ms"
        )


def startup() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp)
        (small / "agentform.yaml").write_text("workspace: small\n")
        (small / "pools.yaml").write_text("profilePools:\n  - {name: a, members: [bot-1]}\n")
        times = startup_times(small)
    base = times["python -c pass"]
    over = {k: (v - base) * 1000 for k, v in times.items()}
    print(
        "start-up (median of 5): "
        + ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in times.items())
        + f" (over bare python: --version +{over['agentform --version']:.0f} ms,"
        f" validate +{over['agentform validate']:.0f} ms)"
    )


if __name__ == "__main__":
    print(f"load average {os.getloadavg()[0]:.2f} at the start")
    if "--quick" in sys.argv[1:]:
        quick()
    else:
        startup()
        main()
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
