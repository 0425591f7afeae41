"""After a merge to main, in two jobs (apply.yml):

`apply.py prepare` (read-only key, no environment): on the checkout of main's head
(not the pushed commit: a run GitHub cancelled is covered by the next, which sees
its commit too), plan with --out, then look for the plan reviewed in the pull
request merged as that head: an artifact of a successful run of the plan workflow
of this repository for the pull request's head commit (github.reviewed_plan). When
that plan is the same as the new one (same files, same live state read, same
changes), the verdict is `reviewed`. Otherwise (stale: another merge or a change in
the service came between; missing; forged; a direct push) the verdict is
`unreviewed` and the new plan is posted on the pull request: it applies only once
someone approves the run's deployment to the `production` environment. No changes:
`none`. Outputs: verdict, sha, pr; the plan to apply is $AGENTFORM_OUT/plan.json.

`apply.py apply` (write key, the job of the `production` environment): applies that
plan with `agentform apply PLANFILE` (which refuses it, before any write, when the
files or the service moved since). An `unreviewed` plan is applied only when the
run's review history holds an approval for `production`; without one (the
environment has no required reviewers) it is refused. Environment: VERDICT,
PR_NUMBER, GITHUB_RUN_ID.

With environments (settings.toml): `apply.py prepare NAME` and `apply.py apply
NAME`, once per environment, in the order the workflow chains them (staging, then
prod): the plan is plan-NAME.json, the reviewed one is plan-NAME.json of the plan
workflow's artifact, and the GitHub environment that gates the write key and whose
approvals count is NAME.

Exit 0 when done, 1 when refused or failed (one line says why, also on the pull
request).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from github import GitHub, GitHubError, fail
from pipeline import (
    OUT,
    SETTINGS,
    WRITE_KEY,
    Missing,
    agentform,
    environment,
    marker,
    output,
    plan_file,
    plan_markdown,
    read_key_of,
    summary,
    write_out,
)

PLAN_WORKFLOW = SETTINGS.get("plan_workflow", "agentform-plan.yml")
PLAN_ARTIFACT = SETTINGS.get("plan_artifact", "agentform-plan")
ENVIRONMENT = SETTINGS.get("environment", "production")

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


def prepare(name: str | None = None) -> int:
    try:
        github = GitHub()
        sha = head_sha()
        pull = github.pull_request_merged_as(sha)
    except GitHubError as exc:
        return fail(str(exc), None, "")
    number = int(pull["number"]) if pull else None
    output("sha", sha)
    output("pr", str(number or ""))
    try:
        env = environment(read_key_of(name), env_name=name)
    except Missing as exc:
        return fail(f"agentform did not plan main: {exc}", number, marker("replan", None, name))
    plan = plan_markdown(env, name)
    if plan.returncode not in (0, 2):
        summary(plan.stdout)
        return fail(f"agentform could not plan main at {sha}", number, marker("replan", None, name))
    if plan.returncode == 0:
        output("verdict", "none")
        summary(f"Nothing to apply: the service matches the files of main at {sha}.")
        return 0
    reviewed: bytes | None = None
    notes: list[str] = []
    if pull is not None:
        try:
            reviewed, notes = github.reviewed_plan(
                PLAN_WORKFLOW, pull["head"]["sha"], PLAN_ARTIFACT, plan_file(name)
            )
        except GitHubError as exc:
            notes = [str(exc)]
    for note in notes:
        print(f"reviewed plan: {note}", file=sys.stderr)
    new = json.loads((OUT / plan_file(name)).read_text(encoding="utf-8"))
    why = difference(reviewed, new)
    if why is None:
        output("verdict", "reviewed")
        line = f"Applies the plan reviewed in pull request #{number}: main at {sha} plans the same."
        print(line, file=sys.stderr)
        summary(line + "\n\n" + plan.stdout)
        return 0
    output("verdict", "unreviewed")
    whose = f"the plan reviewed in #{number}" if number else "a reviewed plan"
    note = (
        f"**This is not {whose}** ({why}). agentform planned again on main at `{sha}`: "
        f"the plan below applies only when someone approves the deployment to "
        f"`{name or ENVIRONMENT}` of [this run]({run_url()})."
    )
    print(f"not applying {whose} as is: {why}; re-planned on main at {sha}", file=sys.stderr)
    body = marker("replan", new.get("workspace"), name) + "\n" + note + "\n\n"
    body += plan.stdout.split("\n", 1)[-1]  # the plan without agentform's own marker
    summary(body)
    if number is not None:
        try:
            github.upsert_comment(number, body)
        except GitHubError as exc:
            return fail(f"the new plan could not be posted: {exc}", None, "")
    return 0


def run_url() -> str:
    server = os.environ.get("GITHUB_SERVER_URL", "https://github.com")
    return f"{server}/{os.environ.get('GITHUB_REPOSITORY', '')}/actions/runs/" + os.environ.get(
        "GITHUB_RUN_ID", ""
    )


def apply(name: str | None = None) -> int:
    verdict = os.environ.get("VERDICT", "")
    number = int(os.environ["PR_NUMBER"]) if os.environ.get("PR_NUMBER") else None
    where = marker("apply", None, name)
    gate = name or ENVIRONMENT
    try:
        env = environment(WRITE_KEY, env_name=name)
        github = GitHub()
        if verdict != "reviewed":
            approved = github.approvals(os.environ.get("GITHUB_RUN_ID", ""), gate)
            if not approved:
                return fail(
                    f"refused: this plan was not reviewed in a pull request and nobody approved "
                    f"this run's deployment to `{gate}`; give that environment required "
                    "reviewers, then re-run all jobs",
                    number,
                    where,
                )
            print(f"the new plan was approved by {', '.join(approved)}", file=sys.stderr)
    except (Missing, GitHubError) as exc:
        return fail(f"agentform did not apply: {exc}", number, where)
    result = agentform("apply", str(OUT / plan_file(name)), "--format", "markdown", env=env)
    report = result.stdout
    if result.returncode != 0 and "stale" in report:
        report += (
            "\n> [!TIP]\n> Re-run **all jobs** of this run (or run the workflow by hand): "
            "it plans again on main's head.\n"
        )
    write_out("apply.md", report)
    summary(report)
    if number is not None and report:
        try:
            github.upsert_comment(number, report)
        except GitHubError as exc:
            return fail(str(exc), None, "")
    return result.returncode


if __name__ == "__main__":
    steps = {"prepare": prepare, "apply": apply}
    if len(sys.argv) not in (2, 3) or sys.argv[1] not in steps:
        sys.exit("usage: apply.py prepare|apply [ENVIRONMENT]")
    sys.exit(steps[sys.argv[1]](*sys.argv[2:]))
