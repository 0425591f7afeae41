"""Benchmark: `agentform affected` on a repository of 100 workspaces x 2
environments (each with a pool file, a shared include, a shared macro library
and a var file per environment), one commit of history, against a working tree
where the shared include changed (so every pair renders twice and differs), and
where only a file no pair reads changed (every pair renders once, none at the
base). The target: under 10 s on a 2-core machine for the first.

Printed side by side, measured in this one run:
- `affected` (a process, as a pipeline runs it) for both changes;
- `validate --all` on the same repository (every pair rendered once), the floor
  of a comparison that renders each pair;
- `git archive` of the base into a temporary directory, the cost of reading it.

The machine is shared: compare the ratios of one run, not times across runs.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORKSPACES = 100
BIN = Path(sys.executable).parent / "agentform"


def write(root: Path) -> None:
    files = {
        "agentform-repository.yaml": "workspaces: [teams/*]\n",
        "common/alerts.j2": "  - name: {{ workspace }}-alerts\n    members: [{{ vars.region }}]\n",
        "common/macros.j2": "{% macro members(t) %}[{{ t }}-1, {{ t }}-2]{% endmacro %}\n",
        "common/staging.yaml": "region: eu-staging\n",
        "common/prod.yaml": "region: eu\n",
    }
    for n in range(WORKSPACES):
        name = f"team-{n:03}"
        files[f"teams/{name}/agentform.yaml"] = (
            f"workspace: {name}\nowns: {{profilePools: ['{name}-*']}}\nenvironments:\n"
            "  staging: {varFiles: [../../common/staging.yaml]}\n"
            "  prod: {varFiles: [../../common/prod.yaml]}\n"
        )
        pools = "".join(
            f"  - name: {name}-{i}\n    members: {{{{ m.members('{name}') }}}}\n" for i in range(20)
        )
        files[f"teams/{name}/pools.yaml"] = (
            "{% import '../../common/macros.j2' as m %}\nprofilePools:\n"
            + pools
            + "{% include '../../common/alerts.j2' %}\n"
        )
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=b", "-c", "user.email=b@example.com", *args],
        check=True,
        capture_output=True,
    )


def cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed(*args: str, cwd: Path) -> tuple[tuple[float, float], str]:
    """Wall time and CPU time (the process and its workers): on a shared machine the
    CPU time is what an idle one would take, spread over its cores."""
    start, used = time.perf_counter(), cpu()
    done = subprocess.run([str(BIN), *args], cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(done.stdout + done.stderr)
    return (elapsed, cpu() - used), done.stdout


def main() -> None:
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        write(root)
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-qm", "base")
        start = time.perf_counter()
        subprocess.run(
            f"git archive HEAD | tar -x -C {temporary}/.. --one-top-level=archived",
            shell=True,
            check=True,
            cwd=root,
        )
        archive = time.perf_counter() - start
        (root / "README.md").write_text("unrelated\n")
        unrelated, out = timed("affected", "--base", "HEAD", "--format", "github-matrix", cwd=root)
        assert out == '{"include":[]}\n', out
        (root / "common/alerts.j2").write_text(
            "  - name: {{ workspace }}-alerts\n    members: [{{ vars.region }}-bot]\n"
        )
        shared, out = timed("affected", "--base", "HEAD", "--format", "json", cwd=root)
        assert out.count('"workspace"') == 2 * WORKSPACES, out[:500]
        validate, _ = timed("validate", "--all", cwd=root)
    pairs = 2 * WORKSPACES
    load = os.getloadavg()[0]
    print(f"repository: {WORKSPACES} workspaces x 2 environments, 21 pools each")
    print(f"machine: {os.cpu_count()} cores, load average {load:.1f} (wall times grow with it)")
    print("                                                              wall s   CPU s")
    for label, (wall, used) in (
        (f"affected, one shared include changed ({pairs} pairs affected)", shared),
        ("affected, an unrelated file changed (none affected)", unrelated),
        ("validate --all (every pair rendered once)", validate),
    ):
        print(f"{label:<60} {wall:7.2f} {used:7.2f}")
    print(f"{'git archive | tar of the base':<60} {archive:7.2f}")
    ratio = shared[1] / validate[1]
    print(f"affected / validate --all, CPU: {ratio:.2f}x (each pair rendered twice: ~2x)")
    idle = shared[1] / min(2, os.cpu_count() or 1)
    verdict = "met" if idle < 10 else "NOT met"
    print(f"target under 10 s on 2 idle cores: CPU / 2 = {idle:.2f} s: {verdict}")


if __name__ == "__main__":
    main()
