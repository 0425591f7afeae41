"""After a merge to main, per affected pair (apply.yml's matrices):

`apply.py prepare WORKSPACE [ENVIRONMENT]` (the environment's read-only key, no
GitHub environment): on the checkout of main's head (not the pushed commit: a
pending run GitHub cancelled is replaced by a newer one of the same pair, which
sees its commit too), plan the pair with --out, then look for the plan reviewed for
this pair: of the pull requests merged most recently, newest first, the first whose
head has a successful run of the plan workflow of this repository holding the
pair's artifact (github.reviewed_plan). Another team's merge has no plan for this
pair and is passed over, so this pair's own reviewed plan is found. When that plan
is the same as the new one (same files read, same live state, same changes and
policy verdicts), the verdict is `reviewed`. Otherwise (stale: another merge to the
same pair or a change in the service came between; missing; forged; a direct push)
the verdict is `unreviewed` and the new plan is posted on the pull request: it
applies only once someone approves the run's deployment to the pair's GitHub
environment. No changes: `none`. Writes $AGENTFORM_OUT/SLUG/plan.json and
verdict.json (the workflow uploads them as agentform-apply-SLUG).

`apply.py verdicts`: after every prepare job, the matrix of the pairs to apply (the
output `matrix`: verdict reviewed or unreviewed), from $AGENTFORM_OUT/*/verdict.json.

`apply.py apply WORKSPACE [ENVIRONMENT]` (the write key, the job of the pair's
GitHub environment): applies prepare's plan with `agentform apply PLANFILE` (which
refuses it, before any write, when the files or the service moved since). An
`unreviewed` plan, or one a mandatory policy refuses, is applied only when the run's
review history holds an approval for that GitHub environment; a mandatory policy is
then overridden with the reason the pull request gives (a line `agentform-override:
RULE: reason` in its description), recorded in the apply report. Environment:
VERDICT, PR_NUMBER, GITHUB_RUN_ID.

Exit 0 when done, 1 when refused or failed (one line says why, also on the pull
request).
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from github import GitHub, GitHubError, fail
from pipeline import (
    OUT,
    READ_KEY,
    SETTINGS,
    Missing,
    Pair,
    agentform,
    environment,
    marker,
    output,
    summary,
    write_out,
)

PLAN_WORKFLOW = SETTINGS.get("plan_workflow", "agentform-plan.yml")
PLAN_ARTIFACT = SETTINGS.get("plan_artifact", "agentform-plan")

# What must be equal for the new plan to be the reviewed one. Not compared: the
# salt of the secret digests (new each plan), and what is derived or only shown.
SAME = {
    "workspace": "another workspace",
    "environment": "another environment",
    "vars": "the variables differ",
    "endpoint": "another endpoint",
    "organizationId": "another organization",
    "inputsDigest": "the workspace files on main differ from those of the reviewed plan",
    "fingerprints": "the service changed since the review",
    "changes": "the changes differ",
    "cannotApply": "the changes that cannot apply differ",
    "warnings": "the warnings differ",
    "targets": "the targets differ",
    "excludes": "the excludes differ",
}


def difference(reviewed: bytes | None, new: dict[str, Any]) -> str | None:
    """Why the reviewed plan is not the new plan, or None when it is."""
    if reviewed is None:
        return "no reviewed plan was found"
    try:
        old = json.loads(reviewed)
    except ValueError:
        return "the reviewed plan is not JSON"
    if not isinstance(old, dict):
        return "the reviewed plan is not a plan"
    for key, why in SAME.items():
        if old.get(key) != new.get(key):
            return why
    return None


def head_sha() -> str:
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()


def reviewed_for(github: GitHub, pair: Pair) -> tuple[dict[str, Any] | None, bytes | None]:
    """The newest merged pull request with a reviewed plan of `pair`, and that plan."""
    for pull in github.merged_pulls():
        found, notes = github.reviewed_plan(
            PLAN_WORKFLOW, pull["head"]["sha"], f"{PLAN_ARTIFACT}-{pair.slug}", "plan.json"
        )
        for note in notes:
            print(f"reviewed plan of #{pull['number']}: {note}", file=sys.stderr)
        if found is not None:
            return pull, found
    return None, None


def prepare(pair: Pair) -> int:
    out = pair.out()
    verdict: dict[str, Any] = {"workspace": pair.workspace, "environment": pair.environment}
    try:
        github = GitHub()
        sha = head_sha()
        merged = github.pull_request_merged_as(sha)
    except GitHubError as exc:
        return fail(str(exc), None, "")
    verdict.update(sha=sha, pr=str(merged["number"]) if merged else "", verdict="failed")
    write_out(out / "verdict.json", json.dumps(verdict))
    number = int(merged["number"]) if merged else None
    try:
        env = environment(pair, READ_KEY)
    except Missing as exc:
        return fail(f"agentform did not plan {pair} on main: {exc}", number, marker("replan", pair))
    plan = agentform(
        pair, "plan", "--format", "markdown", "--out", str(out / "plan.json"),
        "--detailed-exitcode", env=env,
    )  # fmt: skip
    if plan.returncode not in (0, 2):
        summary(plan.stdout)
        where = marker("replan", pair)
        return fail(f"agentform could not plan {pair} on main at {sha}", number, where)
    if plan.returncode == 0:
        verdict["verdict"] = "none"
        write_out(out / "verdict.json", json.dumps(verdict))
        summary(f"{pair}: nothing to apply, the service matches main at {sha}.")
        return 0
    try:
        pull, reviewed = reviewed_for(github, pair)
    except GitHubError as exc:
        print(f"reviewed plan: {exc}", file=sys.stderr)
        pull, reviewed = None, None
    new = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    why = difference(reviewed, new)
    if pull is not None:
        number = int(pull["number"])
        verdict["pr"] = str(number)
    verdict["verdict"] = "reviewed" if why is None else "unreviewed"
    write_out(out / "verdict.json", json.dumps(verdict))
    if why is None:
        line = f"{pair}: applies the plan reviewed in pull request #{number}"
        line += f": main at {sha} plans the same."
        print(line, file=sys.stderr)
        summary(line + "\n\n" + plan.stdout)
        return 0
    return post_replan(github, pair, number, why, sha, plan.stdout)


def post_replan(
    github: GitHub, pair: Pair, number: int | None, why: str, sha: str, markdown: str
) -> int:
    whose = f"the plan of {pair} reviewed in #{number}" if number else f"a reviewed plan of {pair}"
    note = (
        f"**This is not {whose}** ({why}). agentform planned again on main at `{sha}`: "
        f"the plan below applies only when someone approves the deployment to "
        f"`{pair.github_environment()}` of [this run]({run_url()})."
    )
    print(f"not applying {whose} as is: {why}; re-planned on main at {sha}", file=sys.stderr)
    body = marker("replan", pair) + "\n" + note + "\n\n"
    body += markdown.split("\n", 1)[-1]  # the plan without agentform's own marker
    summary(body)
    if number is not None:
        try:
            github.upsert_comment(number, body)
        except GitHubError as exc:
            return fail(f"the new plan could not be posted: {exc}", None, "")
    return 0


def verdicts() -> int:
    """The matrix of the pairs to apply, from every prepare job's verdict.json."""
    include = []
    for path in sorted(OUT.glob("*/verdict.json")):
        found = json.loads(path.read_text(encoding="utf-8"))
        if found.get("verdict") not in ("reviewed", "unreviewed"):
            continue
        pair = Pair(str(found["workspace"]), found.get("environment"))
        include.append({
            **{k: found[k] for k in ("workspace", "environment", "verdict", "pr", "sha")},
            "slug": pair.slug,
            "write_key": pair.setting("write_key", "AGENTFORM_API_KEY"),
            "github_environment": pair.github_environment(),
        })  # fmt: skip
    output("matrix", json.dumps({"include": include}, separators=(",", ":")))
    print(f"{len(include)} pair(s) to apply", file=sys.stderr)
    return 0


def run_url() -> str:
    import os

    server = os.environ.get("GITHUB_SERVER_URL", "https://github.com")
    return f"{server}/{os.environ.get('GITHUB_REPOSITORY', '')}/actions/runs/" + os.environ.get(
        "GITHUB_RUN_ID", ""
    )


if __name__ == "__main__":
    from apply_pair import apply

    steps = {"prepare": prepare, "apply": apply}
    if sys.argv[1:] == ["verdicts"]:
        sys.exit(verdicts())
    if len(sys.argv) not in (3, 4) or sys.argv[1] not in steps:
        sys.exit("usage: apply.py prepare|apply WORKSPACE [ENVIRONMENT] | apply.py verdicts")
    sys.exit(steps[sys.argv[1]](Pair.of(sys.argv[2:])))
