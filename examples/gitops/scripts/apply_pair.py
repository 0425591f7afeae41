"""`apply.py apply WORKSPACE [ENVIRONMENT]`: the apply job of one pair, in the
pair's GitHub environment (the only place its write key exists). Applies the plan
the pair's prepare job made ($AGENTFORM_OUT/SLUG/plan.json) with `agentform apply
PLANFILE`, which judges it again by the policies and refuses it, before any write,
when the files or the service moved since.

Approval: an `unreviewed` plan, or one a mandatory policy refuses, applies only when
this run's review history holds an approval of the deployment to the pair's GitHub
environment (its required reviewers). A mandatory rule is then overridden with the
reason the pull request's description gives on a line `agentform-override: RULE:
reason`; agentform records the override and its reason in the apply report. A
blocking rule has no override.

Environment: VERDICT, PR_NUMBER, GITHUB_RUN_ID, AGENTFORM_API_KEY (the write key).
"""

from __future__ import annotations

import json
import os
import re
import sys

from github import GitHub, GitHubError, fail
from pipeline import WRITE_KEY, Missing, Pair, agentform, environment, marker, summary, write_out

OVERRIDE = re.compile(r"^\s*agentform-override:\s*([\w.-]+)\s*:\s*(\S.*?)\s*$", re.M)


def mandatory_rules(pair: Pair) -> list[str]:
    """The mandatory rules the pair's plan violates (its saved verdicts)."""
    plan = json.loads((pair.out() / "plan.json").read_text(encoding="utf-8"))
    violations = (plan.get("policies") or {}).get("violations") or []
    return sorted({str(v["rule"]) for v in violations if v.get("level") == "mandatory"})


def overrides(github: GitHub, number: int | None, rules: list[str]) -> tuple[list[str], str]:
    """`--override-policy RULE --reason TEXT` for each rule, from the pull request's
    description, or the line saying which rule has no reason given."""
    if not rules:
        return [], ""
    body = ""
    if number is not None:
        body = str((github.call("GET", f"/pulls/{number}") or {}).get("body") or "")
    reasons = dict(OVERRIDE.findall(body))
    missing = [rule for rule in rules if rule not in reasons]
    if missing:
        return [], (
            f"refused: the plan violates the mandatory policy {', '.join(missing)} and the pull "
            "request gives no reason to override it (a line `agentform-override: RULE: reason` "
            "in its description)"
        )
    options = [o for rule in rules for o in ("--override-policy", rule)]
    reason = "; ".join(f"{rule}: {reasons[rule]}" for rule in rules)  # agentform takes one
    return [*options, "--reason", reason], ""


def approved_or_refusal(github: GitHub, pair: Pair, why: str) -> str:
    gate = pair.github_environment()
    approved = github.approvals(os.environ.get("GITHUB_RUN_ID", ""), gate)
    if not approved:
        return (
            f"refused: {why} and nobody approved this run's deployment to `{gate}`; give that "
            "environment required reviewers, then re-run all jobs"
        )
    print(f"the deployment to {gate} was approved by {', '.join(approved)}", file=sys.stderr)
    return ""


def apply(pair: Pair) -> int:
    verdict = os.environ.get("VERDICT", "")
    number = int(os.environ["PR_NUMBER"]) if os.environ.get("PR_NUMBER") else None
    where = marker("apply", pair)
    extra: list[str] = []
    try:
        env = environment(pair, WRITE_KEY)
        github = GitHub()
        rules = mandatory_rules(pair)
        why = [
            "this plan was not reviewed in a pull request" if verdict != "reviewed" else "",
            f"it violates the mandatory policy {', '.join(rules)}" if rules else "",
        ]
        if any(why):
            refusal = approved_or_refusal(github, pair, " and ".join(w for w in why if w))
            extra, missing = overrides(github, number, rules)
            if refusal or missing:
                return fail(refusal or missing, number, where)
    except (Missing, GitHubError) as exc:
        return fail(f"agentform did not apply {pair}: {exc}", number, where)
    except (OSError, ValueError) as exc:
        return fail(f"agentform did not apply {pair}: no plan of prepare ({exc})", number, where)
    plan = str(pair.out() / "plan.json")
    result = agentform(pair, "apply", plan, "--format", "markdown", *extra, env=env)
    report = result.stdout
    if result.returncode != 0 and "stale" in report:
        report += (
            "\n> [!TIP]\n> Re-run **all jobs** of this run (or run the workflow by hand): "
            "it plans again on main's head.\n"
        )
    write_out(pair.out() / "apply.md", report)
    summary(report)
    if number is not None and report:
        try:
            github.upsert_comment(number, with_marker(report, where))
        except GitHubError as exc:
            return fail(str(exc), None, "")
    return result.returncode


def with_marker(report: str, where: str) -> str:
    """The report under the pair's own marker (agentform's names the workspace by its
    `workspace:` name, which two directories may share)."""
    return where + "\n" + (report.split("\n", 1)[-1] if report.startswith("<!--") else report)
