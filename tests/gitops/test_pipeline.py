"""examples/gitops run as a pipeline would, on its simplest repository: one
workspace (`workspaces: [workspace]`, no environments). Its scripts run in a git
repository holding the copied example, against the embedded service and a fake
GitHub on loopback.

A pull request's plan (read-only key, one sticky comment), the apply after the
merge (the reviewed plan, checked for provenance and compared with a plan of main's
head), stale and forged plans, missing secrets, the minimal environment agentform
gets, nightly drift; and the workflows themselves (actionlint, which job sees which
key, pinned installs). Two teams x two environments: test_repository_pipeline.py."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from importlib.metadata import requires
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.gitops.fake_github import REPO, TOKEN, State, fake_github
from tests.markdown_check import structure

pytestmark = [pytest.mark.pipeline, pytest.mark.slow]

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "examples" / "gitops"
RELEASE = ROOT / ".github" / "workflows" / "release.yml"
BIN = Path(sys.executable).parent
READ_KEY = "demo-read-key"  # the demo seed's key with role `read`
WRITE_KEY = "demo-admin-key"
HOOK = "hook-token-1"  # the value of the secret() the example workspace uses
ARTIFACT = "agentform-plan-workspace"  # the pair's artifact of the plan workflow's run
SETTINGS = 'secrets = ["OPS_WEBHOOK_TOKEN"]\n'  # the settings of this repository


@pytest.fixture
def github() -> Iterator[tuple[str, State]]:
    with fake_github() as served:
        yield served


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


class Repo:
    """A team's repository holding the copied example (as its README says), with the
    checkout of one job: main, or a pull request's branch."""

    def __init__(self, root: Path, api: str, state: State) -> None:
        self.root, self.api, self.state = root, api, state
        shutil.copytree(EXAMPLE / "workspace", root / "workspace")
        shutil.copytree(EXAMPLE / "scripts", root / ".github" / "agentform")
        shutil.copy(EXAMPLE / "requirements.txt", root / ".github" / "agentform")
        (root / ".github" / "agentform" / "settings.toml").write_text(SETTINGS)
        (root / "agentform-repository.yaml").write_text("workspaces: [workspace]\n")
        for workflow in (EXAMPLE / "workflows").glob("*.yml"):
            target = root / ".github" / "workflows" / f"agentform-{workflow.name}"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(workflow, target)
        self.start("the agentform pipeline")

    def start(self, message: str) -> None:
        """git init, and the first commit of main."""
        self.out = self.root / "agentform-out"
        git(self.root, "init", "-q", "-b", "main")
        git(self.root, "config", "user.email", "dev@example.com")
        git(self.root, "config", "user.name", "dev")
        (self.root / ".gitignore").write_text("agentform-out/\nsummary.md\noutputs.txt\n")
        self.commit(message)

    def commit(self, message: str) -> str:
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "--allow-empty", "-m", message)
        return git(self.root, "rev-parse", "HEAD")

    def script(self, name: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        """A script as its workflow step runs it: the job's variables, the step's `env:`."""
        summary, outputs = self.root / "summary.md", self.root / "outputs.txt"
        summary.write_text("")
        outputs.write_text("")
        environ = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTFORM"))},
            "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "AGENTFORM_OUT": str(self.out),
            "GITHUB_API_URL": self.api,
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_TOKEN": TOKEN,
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_OUTPUT": str(outputs),
            "OPS_WEBHOOK_TOKEN": HOOK,
            **env,
        }
        environ = {k: v for k, v in environ.items() if v is not None}
        return subprocess.run(
            [sys.executable, str(self.root / ".github" / "agentform" / name), *args],
            cwd=self.root,
            env=environ,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def agentform(self, *args: str, key: str = READ_KEY) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(BIN / "agentform"), "-C", str(self.root / "workspace"), *args],
            capture_output=True,
            text=True,
            check=False,
            env={
                "PATH": os.environ["PATH"],
                "HOME": os.environ.get("HOME", "/"),
                "AGENTFORM_API_KEY": key,
                "OPS_WEBHOOK_TOKEN": HOOK,
                "NO_COLOR": "1",
            },
        )

    def outputs(self) -> dict[str, str]:
        lines = (self.root / "outputs.txt").read_text().splitlines()
        return dict(line.split("=", 1) for line in lines)

    def edit(self, name: str, old: str, new: str) -> None:
        path = self.root / "workspace" / name
        assert old in path.read_text()
        path.write_text(path.read_text().replace(old, new))

    # -- the workflows' jobs --------------------------------------------------------
    def pull_request(
        self, number: int, edits: list[tuple[str, str, str]], **env: str
    ) -> subprocess.CompletedProcess[str]:
        """A pull request from a branch of main; plan.yml runs: validate --all, the
        pair's job (its artifact, in that run), the comment job."""
        branch = f"pr-{number}"
        if git(self.root, "branch", "--list", branch):
            git(self.root, "checkout", "-q", branch)
        else:
            git(self.root, "checkout", "-q", "-b", branch, "main")
        for name, old, new in edits:
            self.edit(name, old, new)
        head = self.commit(f"pull request {number}")
        self.state.open_pull(number, head)
        # validate: no key, no secret (the pair's job runs even when validate failed)
        self.validated = self.script("validate.py", OPS_WEBHOOK_TOKEN=None)  # type: ignore[arg-type]
        shutil.rmtree(self.out, ignore_errors=True)
        result = self.script("pr_pair.py", "workspace", AGENTFORM_READ_API_KEY=READ_KEY, **env)
        run = self.state.run(head)
        if (self.out / "workspace" / "plan.json").exists():
            files = {p.name: p.read_bytes() for p in (self.out / "workspace").iterdir()}
            self.state.upload(run, "agentform-plan-workspace", files)
        pairs = [{"workspace": "workspace", "environment": None}]
        (self.out / "affected.json").write_text(json.dumps(pairs))
        commented = self.script("pr_comment.py", PR_NUMBER=str(number))
        assert commented.returncode == 0, commented.stderr
        git(self.root, "checkout", "-q", "main")
        return result

    def merge(self, number: int) -> str:
        git(self.root, "checkout", "-q", "main")
        git(self.root, "merge", "-q", "--no-ff", f"pr-{number}", "-m", f"Merge #{number}")
        sha = git(self.root, "rev-parse", "HEAD")
        self.state.merge_pull(number, sha)
        return sha

    def prepare(self, **env: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
        """apply.yml's prepare job of the workspace, on main's HEAD: its verdict."""
        git(self.root, "checkout", "-q", "main")
        shutil.rmtree(self.out, ignore_errors=True)
        result = self.script(
            "apply.py", "prepare", "workspace", AGENTFORM_READ_API_KEY=READ_KEY, **env
        )
        verdict = self.out / "workspace" / "verdict.json"
        return result, json.loads(verdict.read_text()) if verdict.exists() else {}

    def apply(
        self, outputs: dict[str, str], run_id: int, **env: str
    ) -> subprocess.CompletedProcess[str]:
        """apply.yml's apply job (the production environment): prepare's plan."""
        git(self.root, "checkout", "-q", outputs["sha"])
        result = self.script(
            "apply.py",
            "apply",
            "workspace",
            AGENTFORM_API_KEY=WRITE_KEY,
            VERDICT=outputs["verdict"],
            PR_NUMBER=outputs["pr"],
            GITHUB_RUN_ID=str(run_id),
            **env,
        )
        git(self.root, "checkout", "-q", "main")
        return result

    def in_sync(self) -> bool:
        return self.agentform("plan", "--detailed-exitcode").returncode == 0

    def comments(self, number: int, what: str) -> list[str]:
        return [
            c["body"]
            for c in self.state.comments_on(number)
            if c["body"].startswith(f"<!-- agentform:{what} ")
        ]


@pytest.fixture
def repo(tmp_path: Path, github: tuple[str, State]) -> Repo:
    api, state = github
    return Repo(tmp_path / "repo", api, state)


ADD_BOT2 = ("pools.yaml", "members: [bot-1, bot-3]", "members: [bot-1, bot-2, bot-3]")
CONCURRENT = ("pools.yaml", "allowConcurrentUse: false", "allowConcurrentUse: true")
STRATEGY = ("pools.yaml", "least_recently_used", "most_recently_used")


def test_a_reviewed_plan_is_applied_after_the_merge(repo: Repo) -> None:
    state = repo.state
    first = repo.pull_request(7, [])
    assert repo.validated.returncode == 0, repo.validated.stderr
    assert "Valid: 1 workspace (workspace)" in repo.validated.stdout
    assert first.returncode == 0, first.stderr
    [comment] = repo.comments(7, "pull-request")
    assert comment.startswith("<!-- agentform:pull-request -->\n")
    assert "| `workspace` | 3 | 0 | 0 | ✅ agentform test: 1 passed, 0 failed | ✅ |" in comment
    assert "<!-- agentform:plan workspace=workspace -->" in comment
    assert "**Plan: 3 to create, 0 to update, 0 to delete.**" in comment
    assert HOOK not in comment, "a secret() value is never shown"
    again = repo.pull_request(7, [ADD_BOT2])
    assert again.returncode == 0, again.stderr
    assert len(state.comments_on(7)) == 1, "the sticky comment is updated, not added"
    assert '"bot-2"' in state.comments_on(7)[0]["body"]
    assert repo.agentform("apply", "--auto-approve").returncode == 1, "the PR's key only reads"

    repo.merge(7)
    prepared, outputs = repo.prepare()
    assert prepared.returncode == 0, prepared.stderr
    assert outputs["verdict"] == "reviewed" and outputs["pr"] == "7"
    assert "applies the plan reviewed in pull request #7" in prepared.stderr
    assert state.blob_auth[-1] is None, "the token must not follow the storage redirect"
    applied = repo.apply(outputs, run_id=1)  # no approval needed: it is what was reviewed
    assert applied.returncode == 0, applied.stderr
    [report] = repo.comments(7, "apply")
    assert "3 succeeded, 0 failed" in report
    assert repo.in_sync()
    nothing, outputs = repo.prepare()
    assert nothing.returncode == 0 and outputs["verdict"] == "none"


def test_quick_merges_are_all_applied_and_a_new_plan_needs_approval(repo: Repo) -> None:
    """Two pull requests planned on the same main, merged one after the other. GitHub
    runs apply.yml for the first merge or cancels it while pending (replaced by the
    second run): either way the surviving run plans main's HEAD, which holds both."""
    state = repo.state
    assert repo.pull_request(7, [ADD_BOT2]).returncode == 0
    assert repo.pull_request(8, [CONCURRENT]).returncode == 0
    repo.merge(7)
    repo.merge(8)  # the run of merge 7 is cancelled while pending: it never starts
    prepared, outputs = repo.prepare()
    assert prepared.returncode == 0, prepared.stderr
    assert outputs["verdict"] == "unreviewed" and outputs["pr"] == "8"
    [replan] = repo.comments(8, "replan")
    assert "This is not the plan of workspace reviewed in #8" in replan
    assert "workspace files on main differ" in replan
    assert '"bot-2"' in replan and "allowConcurrentUse" in replan, "both merges' changes"
    assert repo.comments(8, "pull-request"), "the reviewed plan's comment stays"

    refused = repo.apply(outputs, run_id=41)  # production has no required reviewers
    assert refused.returncode == 1
    assert "nobody approved this run's deployment to `production`" in refused.stderr
    assert len([x for x in refused.stderr.splitlines() if x.startswith("error:")]) == 1
    assert "nobody approved" in repo.comments(8, "apply")[0]
    assert not repo.in_sync(), "a refused apply writes nothing"

    state.approve(41)  # a required reviewer approves the deployment
    applied = repo.apply(outputs, run_id=41)
    assert applied.returncode == 0, applied.stderr
    assert "approved by lead" in applied.stderr
    assert repo.in_sync(), "both merges' changes are applied"


def test_a_stale_plan_is_refused_and_a_rerun_makes_progress(repo: Repo) -> None:
    state = repo.state
    assert repo.pull_request(7, []).returncode == 0
    repo.merge(7)
    _, outputs = repo.prepare()
    assert repo.apply(outputs, run_id=1).returncode == 0

    assert repo.pull_request(8, [CONCURRENT]).returncode == 0
    repo.merge(8)
    prepared, outputs = repo.prepare()
    assert outputs["verdict"] == "reviewed", prepared.stderr
    behind_the_back(repo)  # while the apply job waits at the gate
    stale = repo.apply(outputs, run_id=2)
    assert stale.returncode == 1
    assert "plan is stale: profilePools/checkout-eu changed since the plan was made" in stale.stderr
    [report] = repo.comments(8, "apply")
    assert "plan is stale" in report and "Re-run **all jobs**" in report
    assert "plan is stale" in (repo.root / "summary.md").read_text()
    live = json.loads(repo.agentform("drift", "--format", "json").stdout)
    fields = {f["field"]: f for i in live["items"] for f in i["fields"]}
    assert fields["allowConcurrentUse"]["service"] is False, "a refused apply wrote nothing"

    # re-run all jobs: prepare plans again; the service moved since the review
    rerun, outputs = repo.prepare()
    assert outputs["verdict"] == "unreviewed", rerun.stderr
    assert "the service changed since the review" in repo.comments(8, "replan")[0]
    state.approve(3)
    assert repo.apply(outputs, run_id=3).returncode == 0
    assert repo.in_sync()


def test_only_a_plan_of_this_repositorys_plan_workflow_for_the_head_counts(repo: Repo) -> None:
    state = repo.state
    assert repo.pull_request(7, [ADD_BOT2]).returncode == 0
    good = (repo.out / "workspace" / "plan.json").read_bytes()
    head = state.pulls[7]["head"]["sha"]
    state.runs.clear()  # the genuine run is gone (expired): only forgeries are left
    state.upload(state.run(head, path=".github/workflows/other.yml"), ARTIFACT, {"plan.json": good})
    state.upload(state.run(head, head_repo="mallory/infra"), ARTIFACT, {"plan.json": good})
    state.upload(state.run("0" * 40), ARTIFACT, {"plan.json": good})
    state.upload(state.run(head, conclusion="failure"), ARTIFACT, {"plan.json": good})
    repo.merge(7)
    prepared, outputs = repo.prepare()
    assert outputs["verdict"] == "unreviewed", prepared.stderr
    assert "ran on a fork's code" in prepared.stderr
    assert "it did not succeed (failure)" in prepared.stderr
    assert "other.yml" not in prepared.stderr, "GitHub lists only the plan workflow's runs"
    assert "no reviewed plan was found" in repo.comments(7, "replan")[0]

    # an edited plan in a genuine run (its workflow and scripts are the PR's own code)
    forged = json.loads(good)
    forged["changes"][0]["calls"][0]["body"]["members"] = ["bot-9"]
    state.upload(state.run(head), ARTIFACT, {"plan.json": json.dumps(forged).encode()})
    prepared, outputs = repo.prepare()
    assert outputs["verdict"] == "unreviewed", prepared.stderr
    assert "the changes differ" in repo.comments(7, "replan")[0]
    state.upload(state.run(head), ARTIFACT, {"plan.json": good})
    prepared, outputs = repo.prepare()
    assert outputs["verdict"] == "reviewed", prepared.stderr


def test_the_refusals_of_a_run(repo: Repo) -> None:
    sys.path.insert(0, str(EXAMPLE / "scripts"))
    try:
        from github import GitHub

        gh = GitHub.__new__(GitHub)
        gh.repo = REPO
        run = repo.state.run("abc")
        path = ".github/workflows/agentform-plan.yml"
        assert gh.refusal(run, path, "abc") is None

        def refusal(run: dict[str, Any], path: str, sha: str) -> str:
            return str(gh.refusal(run, path, sha))

        assert "not of" in refusal({**run, "path": ".github/workflows/x.yml"}, path, "abc")
        other = {**run, "repository": {"full_name": "mallory/infra"}}
        assert "another repository" in refusal(other, path, "abc")
        assert "fork" in refusal({**run, "head_repository": None}, path, "abc")
        assert "not abc" in refusal({**run, "head_sha": "def"}, path, "abc")
        assert "pull_request_target" in refusal(
            {**run, "event": "pull_request_target"}, path, "abc"
        )
    finally:
        sys.path.remove(str(EXAMPLE / "scripts"))
        sys.modules.pop("github", None)


@pytest.mark.parametrize(
    ("field", "value", "refusal"),
    [
        ("workspace", "another", "the plan is for workspace another"),
        ("inputsDigest", "0" * 64, "made for another environment than the one it names, or edited"),
        ("fingerprints", {"profilePools/checkout-eu": "absent"}, None),
    ],
)
def test_apply_refuses_an_edited_saved_plan(
    repo: Repo, field: str, value: Any, refusal: str | None
) -> None:
    """What agentform's own `apply PLANFILE` refuses today (the pipeline never applies
    an artifact: it applies its own plan when it equals the reviewed one)."""
    assert repo.agentform("plan", "--out", str(repo.root / "plan.json")).returncode == 0
    plan = json.loads((repo.root / "plan.json").read_text())
    if field == "fingerprints":
        repo.agentform("apply", "--auto-approve", key=WRITE_KEY)  # the objects exist now
        value = {k: "absent" for k in plan["fingerprints"]}
        refusal = "changed since the plan was made"
    plan[field] = value
    (repo.root / "plan.json").write_text(json.dumps(plan))
    result = repo.agentform("apply", str(repo.root / "plan.json"), key=WRITE_KEY)
    assert refusal is not None
    assert result.returncode == 1 and refusal in result.stderr + result.stdout


def test_apply_refuses_a_saved_plan_whose_calls_were_edited(repo: Repo) -> None:
    assert repo.agentform("plan", "--out", str(repo.root / "plan.json")).returncode == 0
    plan = json.loads((repo.root / "plan.json").read_text())
    for change in plan["changes"]:
        if change["id"] == "profilePools/checkout-eu":
            change["calls"][0]["body"]["allowConcurrentUse"] = True
    (repo.root / "plan.json").write_text(json.dumps(plan))
    result = repo.agentform("apply", str(repo.root / "plan.json"), key=WRITE_KEY)
    assert result.returncode == 1
    assert "profilePools/checkout-eu: calls differ (at calls[0].body" in result.stderr


@pytest.mark.parametrize(
    ("script", "env", "line"),
    [
        (
            "pr_pair.py",
            {"OPS_WEBHOOK_TOKEN": ""},
            "OPS_WEBHOOK_TOKEN is not set: it must be a secret",
        ),
        ("pr_pair.py", {"AGENTFORM_READ_API_KEY": ""}, "AGENTFORM_READ_API_KEY is not set"),
        (
            "pr_pair.py",
            {"GITHUB_ACTIONS": "true", "AGENTFORM_ENDPOINT": ""},
            "AGENTFORM_ENDPOINT is not set and workspace names no endpoint",
        ),
        ("drift.py", {"OPS_WEBHOOK_TOKEN": ""}, "OPS_WEBHOOK_TOKEN is not set"),
        (
            "apply.py",
            {"AGENTFORM_API_KEY": ""},
            "AGENTFORM_API_KEY is not set: it must be the secret AGENTFORM_API_KEY",
        ),
    ],
)
def test_a_missing_secret_fails_with_one_line_naming_it(
    repo: Repo, script: str, env: dict[str, str], line: str
) -> None:
    args = ("apply", "workspace") if script == "apply.py" else ("workspace",)
    extra = {"VERDICT": "reviewed", "PR_NUMBER": "5"} if script == "apply.py" else {}
    result = repo.script(script, *args, **{"AGENTFORM_READ_API_KEY": READ_KEY, **extra, **env})
    assert result.returncode == 1
    logged = [x for x in result.stderr.splitlines() if x.startswith(("error:", "::error"))]
    assert len(logged) == 1 and line in logged[0], result.stderr
    assert "Traceback" not in result.stderr
    if script == "apply.py":
        [comment] = repo.state.comments_on(5)
        assert line in comment["body"]
        assert comment["body"].startswith("<!-- agentform:apply workspace=workspace -->")
    if script == "pr_pair.py":
        result_json = json.loads((repo.out / "workspace" / "result.json").read_text())
        assert line in result_json["plan"]["error"], "the comment job shows it"


def test_agentform_gets_a_minimal_environment(repo: Repo) -> None:
    """A workspace template cannot read the job's GITHUB_TOKEN or its other secrets:
    env() refuses a variable the workspace does not allow, and even one it allows
    (as here) is not in the environment the scripts give agentform."""
    uses_token = (
        "webhooks.yaml",
        "headers:",
        "headers:\n      X-Run: \"{{ env('GITHUB_TOKEN') }}\"",
    )
    allows_it = ("agentform.yaml", "endpoint: local", "endpoint: local\nallowEnv: [GITHUB_TOKEN]")
    result = repo.pull_request(5, [uses_token, allows_it])
    assert result.returncode == 1
    [comment] = repo.comments(5, "pull-request")
    assert "environment variable GITHUB_TOKEN is not set" in comment
    assert TOKEN not in comment


def test_drift_with_the_read_key(repo: Repo) -> None:
    state = repo.state
    repo.agentform("apply", "--auto-approve", key=WRITE_KEY)
    behind_the_back(repo)
    drift = repo.script("drift.py", "workspace", AGENTFORM_READ_API_KEY=READ_KEY)
    assert drift.returncode == 0, drift.stderr
    assert repo.outputs() == {"drifted": "true"}
    [issue] = [i for i in state.issues.values() if i["state"] == "open"]
    assert issue["labels"] == ["agentform-drift"]
    assert issue["title"] == "Drift in agentform workspace"
    report = structure(issue["body"])
    assert report.marker == "<!-- agentform:drift workspace=workspace -->"
    assert "changed in the service" in report.sections[0].code
    assert repo.script("drift.py", "workspace", AGENTFORM_READ_API_KEY=READ_KEY).returncode == 0
    assert len(state.issues) == 1, "the open drift issue is updated, not duplicated"
    repo.agentform("apply", "--auto-approve", key=WRITE_KEY)
    gone = repo.script("drift.py", "workspace", AGENTFORM_READ_API_KEY=READ_KEY)
    assert gone.returncode == 0 and repo.outputs() == {"drifted": "false"}
    assert [i["state"] for i in state.issues.values()] == ["closed"]


def test_a_failed_plan_is_posted_with_its_reason(repo: Repo) -> None:
    result = repo.pull_request(
        9, [("pools.yaml", "members: [bot-1, bot-2]", "membrs: [bot-1, bot-2]")]
    )
    assert result.returncode == 1
    [comment] = repo.state.comments_on(9)
    assert comment["body"].startswith("<!-- agentform:pull-request -->")
    assert "| `workspace` | ❌ agentform could not plan workspace" in comment["body"]
    assert "did you mean 'members'" in comment["body"]
    assert not (repo.out / "workspace" / "plan.json").exists()


def test_a_pull_requests_tests_run_without_a_key_and_are_commented(repo: Repo) -> None:
    result = repo.script("pr_pair.py", "workspace", PLAN="false", OPS_WEBHOOK_TOKEN=None)  # type: ignore[arg-type]
    assert result.returncode == 0, result.stderr
    test = (repo.out / "workspace" / "test.md").read_text()
    assert "### ✅ agentform test: 1 passed, 0 failed" in test
    assert not (repo.out / "workspace" / "plan.json").exists(), "tests only: no plan"
    junit = (repo.out / "workspace" / "test-results.xml").read_text()
    assert '<testsuite name="tests/smoke.yaml" tests="1" failures="0"' in junit
    assert not (repo.root / "workspace" / ".agentform").exists()  # no service state left


def test_a_failing_test_fails_the_step_and_says_why_in_the_comment(repo: Repo) -> None:
    repo.edit("pools.yaml", "members: [bot-1, bot-2]", "members: [bot-1]")
    repo.edit(
        "tests/smoke.yaml",
        "as: order}",
        "as: order}\n      - execute: {agent: checkout-agent, pool: checkout-eu, as: second}",
    )
    repo.edit("tests/smoke.yaml", "execution: order,", "execution: second,")
    result = repo.pull_request(12, [])
    assert result.returncode == 1
    [comment] = repo.comments(12, "pull-request")
    assert "### ❌ agentform test: 0 passed, 1 failed" in comment
    # a smaller pool: the second checkout is refused while the first holds its profile
    assert (
        "`tests/smoke.yaml:7:9`: execute\n\n```text\nPOST /agents/checkout-agent/execute: "
        "409 every profile of pool 'checkout-eu' is in use" in comment
    )
    assert "❌ agentform test: 0 passed, 1 failed" in comment


def behind_the_back(repo: Repo) -> None:
    """Someone changes the pool in the service by hand (selectionStrategy)."""
    code = """
import asyncio, sys
from pathlib import Path
from agentform.api.connect import Endpoint
from agentform.cli.endpoint import open_client
from agentform.core.sensitive import Sensitive
from agentform.service import DEMO_ADMIN_KEY

async def main():
    async with open_client(Endpoint("local", Sensitive(DEMO_ADMIN_KEY)), Path(sys.argv[1])) as api:
        pool = (await api.list_all("/agent-profile-pools", {"searchName": "checkout-eu"}))[0]
        await api.request("PATCH", f"/agent-profile-pools/{pool['id']}",
                          json={"selectionStrategy": "most_recently_used"})

asyncio.run(main())
"""
    subprocess.run([sys.executable, "-c", code, str(repo.root / "workspace")], check=True)


# -- the workflows ---------------------------------------------------------------------
def workflows() -> dict[str, dict[str, Any]]:
    return {
        p.name: yaml.safe_load(p.read_text()) for p in sorted((EXAMPLE / "workflows").glob("*.yml"))
    }


def secrets_of(node: Any) -> set[str]:
    return set(re.findall(r"secrets\.(\w+)", json.dumps(node)))


def test_only_the_apply_job_sees_a_write_key() -> None:
    """The write key is a secret of the pair's GitHub environment, read only by the
    apply job that declares it; every other job has at most the pair's read key."""
    found = workflows()
    assert sorted(found) == ["apply.yml", "drift.yml", "plan.yml"]
    for name, workflow in found.items():
        assert not secrets_of(workflow.get("env")), name
        for job_name, job in workflow["jobs"].items():
            text = json.dumps(job)
            if "secrets[matrix.write_key]" in text:
                assert (name, job_name) == ("apply.yml", "apply")
                assert job["environment"] == "${{ matrix.github_environment }}"
                assert "read_key" not in text
            else:
                assert "environment" not in job, (name, job_name)
            assert not secrets_of(job), "no secret by a fixed name: settings.toml names them"
    for name, job in [("plan.yml", "pair"), ("drift.yml", "drift"), ("apply.yml", "prepare")]:
        assert "secrets[matrix.read_key]" in json.dumps(found[name]["jobs"][job])
        assert found[name]["jobs"][job]["strategy"]["fail-fast"] is False
    [validate] = [
        s
        for s in found["plan.yml"]["jobs"]["affected"]["steps"]
        if "validate.py" in s.get("run", "")
    ]
    assert "env" not in validate, "validate gets no key and no secret"
    apply_job = found["apply.yml"]["jobs"]["apply"]
    assert apply_job["concurrency"] == {
        "group": "agentform-apply-${{ matrix.slug }}",
        "cancel-in-progress": False,
    }, "one pair's run never cancels or waits for another pair's"
    assert "concurrency" not in found["apply.yml"], "a repository-wide group would"


def test_agentform_is_installed_pinned_with_hashes() -> None:
    for name, workflow in workflows().items():
        for job in workflow["jobs"].values():
            installs = [s["run"] for s in job["steps"] if "pip" in s.get("run", "")]
            runs = " ".join(s.get("run", "") for s in job["steps"])
            if "pr_comment.py" in runs or "apply.py verdicts" in runs:
                assert installs == [], "gathering runs no agentform"
                continue
            assert installs == [
                'python -m pip install --require-hashes --no-deps --only-binary=":all:" '
                "-r .github/agentform/requirements.txt"
            ], name
    text = (EXAMPLE / "requirements.txt").read_text()
    requirements = re.findall(
        r"^(\S[^\n\\]*?)\s*\\\n((?:\s+--hash=sha256:[0-9a-f]{64}\s*\\?\n?)+)", text, re.M
    )
    names = {}
    for line, _hashes in requirements:
        assert "==" in line or " @ https://" in line, line
        names[re.split(r"[ =@]", line)[0].lower().replace("_", "-")] = line
    listed = sum(1 for line in text.splitlines() if line and not line.startswith((" ", "#")))
    assert listed == len(requirements), "every requirement has its hashes"
    assert names["agentform"].startswith("agentform @ https://github.com/")
    for dependency in requires("agentform") or []:
        if "extra ==" in dependency:
            continue
        name = re.split(r"[<>=!~;\[ ]", dependency, maxsplit=1)[0].lower().replace("_", "-")
        assert name in names, f"{name} (a dependency of agentform) is not pinned"


def test_workflows_pass_actionlint(tmp_path: Path) -> None:
    files = [*sorted((EXAMPLE / "workflows").glob("*.yml")), RELEASE]
    actionlint = shutil.which("actionlint", path=str(BIN)) or "actionlint"
    result = subprocess.run([actionlint, *map(str, files)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    broken = tmp_path / "broken.yml"
    broken.write_text(files[0].read_text().replace("runs-on:", "runs_on:"))
    assert subprocess.run([actionlint, str(broken)], capture_output=True).returncode == 1
