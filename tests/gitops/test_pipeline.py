"""examples/gitops run as a pipeline would: its scripts, against the embedded service
and a fake GitHub on loopback. A pull request's plan (one sticky comment), the apply
of its saved plan after the merge, a stale plan refused, a drift issue opened,
updated and closed. The workflows themselves are checked by actionlint."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.gitops.fake_github import TOKEN, State, fake_github
from tests.markdown_check import structure

EXAMPLE = Path(__file__).parents[2] / "examples" / "gitops"
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def github() -> Iterator[tuple[str, State]]:
    with fake_github() as served:
        yield served


class Repo:
    """A checkout of a team's repository holding the copied example."""

    def __init__(self, root: Path, api: str) -> None:
        self.root = root
        self.api = api
        shutil.copytree(EXAMPLE / "workspace", root / "workspace")
        shutil.copytree(EXAMPLE / "scripts", root / ".github" / "agentform")
        self.out = root / "agentform-out"

    def script(self, name: str, **env: str) -> subprocess.CompletedProcess[str]:
        summary, outputs = self.root / "summary.md", self.root / "outputs.txt"
        summary.write_text("")
        outputs.write_text("")
        environ = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTFORM"))},
            "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "AGENTFORM_WORKSPACE": "workspace",
            "AGENTFORM_OUT": str(self.out),
            "GITHUB_API_URL": self.api,
            "GITHUB_REPOSITORY": "team/infra",
            "GITHUB_TOKEN": TOKEN,
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_OUTPUT": str(outputs),
            "NO_COLOR": "1",
            **env,
        }
        return subprocess.run(
            [sys.executable, str(self.root / ".github" / "agentform" / name)],
            cwd=self.root,
            env=environ,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def agentform(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(BIN / "agentform"), "-C", str(self.root / "workspace"), *args],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "NO_COLOR": "1"},
        )

    def outputs(self) -> dict[str, str]:
        lines = (self.root / "outputs.txt").read_text().splitlines()
        return dict(line.split("=", 1) for line in lines)

    def edit(self, name: str, old: str, new: str) -> None:
        path = self.root / "workspace" / name
        path.write_text(path.read_text().replace(old, new))


def pull_request_plan(repo: Repo, state: State, number: int) -> subprocess.CompletedProcess[str]:
    """plan.yml: the script, then the artifact upload step."""
    result = repo.script("pr_plan.py", PR_NUMBER=str(number))
    if (repo.out / "plan.json").exists():
        state.upload(
            f"agentform-plan-{number}", {"plan.json": (repo.out / "plan.json").read_bytes()}
        )
    return result


@pytest.mark.slow
def test_the_pipeline_end_to_end(tmp_path: Path, github: tuple[str, State]) -> None:
    api, state = github
    repo = Repo(tmp_path / "repo", api)

    # -- a pull request: plan, one sticky comment, updated on the next push -----
    first = pull_request_plan(repo, state, 7)
    assert first.returncode == 0, first.stderr
    assert repo.outputs() == {"changes": "true"}
    comments = state.comments_on(7)
    assert len(comments) == 1
    doc = structure(comments[0]["body"])
    assert doc.marker == "<!-- agentform:plan workspace=gitops-example -->"
    assert "**Plan: 2 to create, 0 to update, 0 to delete.**" in doc.paragraphs[0]
    assert "agentform plan" in (repo.root / "summary.md").read_text()
    repo.edit("pools.yaml", "[bot-1, bot-3]", "[bot-1, bot-2, bot-3]")
    second = pull_request_plan(repo, state, 7)
    assert second.returncode == 0, second.stderr
    assert len(state.comments_on(7)) == 1, "the sticky comment is updated, not added"
    assert '"bot-2"' in state.comments_on(7)[0]["body"]

    # -- the merge: the reviewed plan is downloaded and applied -------------------
    state.pulls_of_commit["abc123"] = [7]
    applied = repo.script("apply.py", GITHUB_SHA="abc123")
    assert applied.returncode == 0, applied.stderr
    assert "applying the plan reviewed in pull request #7" in applied.stderr
    assert state.blob_auth[-1] is None, "the token must not follow the storage redirect"
    reports = [c for c in state.comments_on(7) if c["body"].startswith("<!-- agentform:apply")]
    assert len(reports) == 1 and "2 succeeded, 0 failed" in reports[0]["body"]
    assert repo.agentform("plan", "--detailed-exitcode").returncode == 0

    # -- a stale plan: the service moved between review and merge ----------------
    repo.edit("pools.yaml", "allowConcurrentUse: false", "allowConcurrentUse: true")
    assert pull_request_plan(repo, state, 8).returncode == 0
    behind_the_back(repo.root / "workspace")
    state.pulls_of_commit["def456"] = [8]
    stale = repo.script("apply.py", GITHUB_SHA="def456")
    assert stale.returncode == 1
    assert "plan is stale: profilePools/checkout-eu changed since the plan was made" in stale.stderr
    refusal = [c for c in state.comments_on(8) if c["body"].startswith("<!-- agentform:apply")]
    assert len(refusal) == 1 and "plan is stale" in refusal[0]["body"]
    assert "plan is stale" in (repo.root / "summary.md").read_text()
    live = json.loads(repo.agentform("drift", "--format", "json").stdout)
    fields = {f["field"]: f for i in live["items"] for f in i["fields"]}
    assert fields["allowConcurrentUse"]["service"] is False, "a refused apply wrote nothing"

    # -- nightly drift: an issue opened, updated, then closed when drift is gone --
    drift = repo.script("drift.py")
    assert drift.returncode == 0, drift.stderr
    assert repo.outputs() == {"drifted": "true"}
    issues = [i for i in state.issues.values() if i["state"] == "open"]
    assert len(issues) == 1 and issues[0]["labels"] == ["agentform-drift"]
    assert issues[0]["title"] == "Drift in agentform workspace gitops-example"
    report = structure(issues[0]["body"])
    assert report.marker == "<!-- agentform:drift workspace=gitops-example -->"
    assert "changed in the service" in report.sections[0].code
    assert repo.script("drift.py").returncode == 0
    assert len(state.issues) == 1, "the open drift issue is updated, not duplicated"
    no_plan = repo.script("apply.py", GITHUB_SHA="0ff1ce")  # plan-and-apply at once
    assert no_plan.returncode == 0, no_plan.stderr
    assert "no reviewed plan was saved" in no_plan.stderr
    gone = repo.script("drift.py")
    assert gone.returncode == 0 and repo.outputs() == {"drifted": "false"}
    assert [i["state"] for i in state.issues.values()] == ["closed"]


def behind_the_back(workspace: Path) -> None:
    """Someone changes the pool in the service by hand (selectionStrategy)."""
    code = """
import asyncio, sys
from pathlib import Path
from agentform.api.connect import Endpoint, open_client
from agentform.core.sensitive import Sensitive
from agentform.service import DEMO_ADMIN_KEY

async def main():
    async with open_client(Endpoint("local", Sensitive(DEMO_ADMIN_KEY)), Path(sys.argv[1])) as api:
        pool = (await api.list_all("/agent-profile-pools", {"searchName": "checkout-eu"}))[0]
        await api.request("PATCH", f"/agent-profile-pools/{pool['id']}",
                          json={"selectionStrategy": "most_recently_used"})

asyncio.run(main())
"""
    subprocess.run([sys.executable, "-c", code, str(workspace)], check=True)


def test_a_failed_plan_is_posted_with_its_reason(tmp_path: Path, github: tuple[str, State]) -> None:
    api, state = github
    repo = Repo(tmp_path / "repo", api)
    repo.edit("pools.yaml", "members: [bot-1, bot-2]", "membrs: [bot-1, bot-2]")
    result = repo.script("pr_plan.py", PR_NUMBER="9")
    assert result.returncode == 1
    [comment] = state.comments_on(9)
    doc = structure(comment["body"])
    assert doc.marker == "<!-- agentform:plan workspace=gitops-example -->"
    assert any("did you mean 'members'" in a for a in doc.alerts)
    assert not (repo.out / "plan.json").exists()


def test_workflows_pass_actionlint(tmp_path: Path) -> None:
    workflows = sorted((EXAMPLE / "workflows").glob("*.yml"))
    assert [p.name for p in workflows] == ["apply.yml", "drift.yml", "plan.yml"]
    actionlint = shutil.which("actionlint", path=str(BIN)) or "actionlint"
    result = subprocess.run([actionlint, *map(str, workflows)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    broken = tmp_path / "broken.yml"
    broken.write_text(workflows[0].read_text().replace("runs-on:", "runs_on:"))
    assert subprocess.run([actionlint, str(broken)], capture_output=True).returncode == 1
