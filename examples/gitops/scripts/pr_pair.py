"""On a pull request, one job per affected pair (the matrix of matrix.py):
`agentform test --env` (the workspace's tests, each on a fresh embedded service: no
key, no secret), then, unless the pair is affected by its tests only, plan with the
environment's read-only key, judged by the policies of the pull request's base
(`--policies-from BASE`, never the pull request's own).

Writes $AGENTFORM_OUT/SLUG/: plan.json (the saved plan: the workflow uploads the
directory as the artifact agentform-plan-SLUG, which the apply workflow compares
with its own plan after the merge), plan.md, test.md, test-results.xml, and
result.json, which the comment job (pr_comment.py) gathers into the pull request's
one comment. Posts nothing itself: matrix jobs cannot edit one comment safely at
once.

Usage: pr_pair.py WORKSPACE [ENVIRONMENT]. Environment: PLAN ("false": test only),
BASE_SHA, AGENTFORM_READ_API_KEY (the pair's read key), the secret() variables of
settings.toml. Exit 1 when a test failed, the plan failed or a mandatory or blocking
policy is violated (the comment says which), else 0.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from pipeline import READ_KEY, Missing, Pair, agentform, environment, error, summary, write_out


def run_tests(pair: Pair) -> dict[str, Any]:
    out = pair.out()
    result = agentform(
        pair, "test", "--format", "markdown", "--junit-xml", str(out / "test-results.xml"),
        env=environment(pair, None, secrets=False),
    )  # fmt: skip
    write_out(out / "test.md", result.stdout)
    if not result.stdout.strip():
        return {"ran": False, "ok": False, "line": "agentform test did not run: see the job's log"}
    heads = [line for line in result.stdout.splitlines() if line.startswith("### ")]
    line = heads[0].removeprefix("### ") if heads else "agentform test ran"
    line = line.split(" ", 1)[-1] if line[:1] in ("✅", "❌") else line  # the table says it
    return {"ran": True, "ok": result.returncode == 0, "line": line}


def run_plan(pair: Pair) -> dict[str, Any]:
    out = pair.out()
    base = os.environ.get("BASE_SHA", "")
    judged = ["--policies-from", base] if base else []
    try:
        env = environment(pair, READ_KEY)
    except Missing as exc:
        return {"ok": False, "error": f"agentform did not plan {pair}: {exc}"}
    plan = agentform(
        pair, "plan", "--format", "markdown", "--out", str(out / "plan.json"),
        "--detailed-exitcode", *judged, env=env,
    )  # fmt: skip
    write_out(out / "plan.md", plan.stdout)
    if plan.returncode not in (0, 2) or not (out / "plan.json").exists():
        return {"ok": False, "error": f"agentform could not plan {pair}: see its section"}
    saved = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    violations = (saved.get("policies") or {}).get("violations") or []
    refused = [v for v in violations if v.get("level") in ("mandatory", "blocking")]
    return {
        "ok": not refused,
        "summary": saved.get("summary") or {},
        "violations": violations,
    }


def main(args: list[str]) -> int:
    pair = Pair.of(args)
    (pair.out() / "plan.json").unlink(missing_ok=True)
    result: dict[str, Any] = {"workspace": pair.workspace, "environment": pair.environment}
    result["tests"] = run_tests(pair)
    if os.environ.get("PLAN", "true") != "false":
        result["plan"] = run_plan(pair)
    write_out(pair.out() / "result.json", json.dumps(result, indent=2))
    failed = [
        what
        for what, done in (("tests", result["tests"]), ("plan", result.get("plan")))
        if done is not None and not done["ok"]
    ]
    for what in failed:
        error(f"{pair}: {result[what].get('error') or what + ' failed'}")
    shown = pair.out() / "plan.md"
    summary(shown.read_text(encoding="utf-8") if shown.exists() else "")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
