"""The pairs a workflow's matrix runs on, as `strategy.matrix` takes them through
fromJSON: `{"include": [{workspace, environment, slug, plan, read_key, write_key,
github_environment}, ...]}`, `{"include": []}` when there is none (the jobs are
skipped).

`matrix.py affected BASE`: the pairs `agentform affected --base BASE` lists (a pull
request: its base; a merge: the commit before the push). A pair affected by its
tests only is tested, not planned (`plan` false); a deleted pair is left out (a
deleted workspace deletes nothing). `matrix.py all`: every pair (`agentform list
--all`), for the nightly drift check.

Offline: no key, no secret. Writes the output `matrix` (GITHUB_OUTPUT) and, for the
comment job, $AGENTFORM_OUT/affected.json. Exit 1 when agentform cannot say (the
log says why): a pipeline never guesses which pairs to skip.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from pipeline import OUT, Missing, Pair, agentform, environment, error, output, write_out

ROOT = Pair(".")  # agentform finds the repository from its root


def entry(pair: Pair, reasons: list[str]) -> dict[str, Any]:
    tests_only = bool(reasons) and all(r.startswith("tests only") for r in reasons)
    return {
        "workspace": pair.workspace,
        "environment": pair.environment,
        "slug": pair.slug,
        "plan": not tests_only,
        "read_key": pair.setting("read_key", "AGENTFORM_READ_API_KEY"),
        "write_key": pair.setting("write_key", "AGENTFORM_API_KEY"),
        "github_environment": pair.github_environment(),
    }


def pairs(command: list[str]) -> list[tuple[Pair, list[str]]]:
    done = agentform(ROOT, *command, "--format", "json", env=environment(ROOT, None, False))
    if done.returncode != 0:
        raise Missing(f"agentform {command[0]} failed (exit {done.returncode}); its log says why")
    found = json.loads(done.stdout)
    rows = found["affected"] if isinstance(found, dict) else found
    out = []
    for row in rows:
        reasons = [str(r) for r in row.get("reasons", [])]
        if any(r.startswith("deleted") for r in reasons):
            continue
        out.append((Pair(row["workspace"], row.get("environment")), reasons))
    return out


def main(args: list[str]) -> int:
    if args[:1] == ["affected"] and len(args) == 2:
        command = ["affected", "--base", args[1]]
    elif args == ["all"]:
        command = ["list", "--all"]
    else:
        sys.exit("usage: matrix.py affected BASE | matrix.py all")
    try:
        found = pairs(command)
    except Missing as exc:
        error(str(exc))
        return 1
    slugs = [p.slug for p, _ in found]
    if len(set(slugs)) != len(slugs):
        error(f"two pairs share an artifact name: {sorted(s for s in slugs if slugs.count(s) > 1)}")
        return 1
    matrix = {"include": [entry(p, reasons) for p, reasons in found]}
    write_out(
        OUT / "affected.json",
        json.dumps([{**entry(p, r), "reasons": r} for p, r in found], indent=2),
    )
    output("matrix", json.dumps(matrix, separators=(",", ":")))
    output("count", str(len(found)))
    print(f"{len(found)} pair(s): {', '.join(str(p) for p, _ in found) or 'none'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
