"""The two-environment variant of examples/gitops (examples/gitops/environments/) run
as a pipeline would, on examples/environments: one pull-request comment with a plan
per environment and the env diff, then staging applied, then prod, each with its own
keys; and its workflows through actionlint."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from agentform.service import create_app, read_seed
from tests.gitops.fake_github import State
from tests.gitops.test_pipeline import BIN, EXAMPLE, ROOT, Repo, git
from tests.gitops.test_pipeline import github as github  # the fake GitHub, a fixture

pytestmark = (
    pytest.mark.pipeline
)  # the GitOps example run as a pipeline (git, its scripts, a fake GitHub)

VARIANT = EXAMPLE / "environments"
WORKSPACE = ROOT / "examples" / "environments"
READ = {"staging": "staging-read-key", "prod": "prod-read-key"}
WRITE = {"staging": "staging-admin-key", "prod": "prod-admin-key"}
LOCAL = {"AGENTFORM_ENDPOINT": "local"}  # the example names a URL; here, the embedded service


class EnvironmentsRepo(Repo):
    """A repository holding the variant: examples/environments as its workspace."""

    def __init__(self, root: Path, api: str, state: State) -> None:
        super().__init__(root, api, state)
        shutil.rmtree(root / "workspace")
        shutil.copytree(WORKSPACE, root / "workspace", ignore=shutil.ignore_patterns(".agentform"))
        shutil.copy(VARIANT / "settings.toml", root / ".github" / "agentform" / "settings.toml")
        for workflow in VARIANT.glob("*.yml"):
            shutil.copy(workflow, root / ".github" / "workflows" / f"agentform-{workflow.name}")
        db = root / "workspace" / ".agentform" / "service.db"
        create_app(db, seed=read_seed(root / "workspace" / "seed.yaml"))
        (root / ".gitignore").write_text("agentform-out/\nsummary.md\noutputs.txt\n.agentform/\n")
        self.commit("two environments")

    def plan_pull_request(self, number: int, edits: list[tuple[str, str, str]]) -> str:
        branch = f"pr-{number}"
        git(self.root, "checkout", "-q", "-b", branch, "main")
        for name, old, new in edits:
            self.edit(name, old, new)
        head = self.commit(f"pull request {number}")
        self.state.open_pull(number, head)
        keys = {f"AGENTFORM_READ_API_KEY_{n.upper()}": k for n, k in READ.items()}
        result = self.script("pr_plan.py", PR_NUMBER=str(number), **keys, **LOCAL)
        assert result.returncode == 0, result.stderr
        plans = {p.name: p.read_bytes() for p in self.out.glob("plan-*.json")}
        self.state.upload(self.state.run(head), "agentform-plan", plans)
        git(self.root, "checkout", "-q", "main")
        return head

    def prepare_and_apply(
        self, name: str, run_id: int, write_key: str
    ) -> subprocess.CompletedProcess[str]:
        git(self.root, "checkout", "-q", "main")
        # the reusable workflow passes the environment's read key as AGENTFORM_READ_API_KEY
        prepared = self.script(
            "apply.py", "prepare", name, AGENTFORM_READ_API_KEY=READ[name], **LOCAL
        )
        assert prepared.returncode == 0, prepared.stderr
        outputs = self.outputs()
        assert outputs["verdict"] == "reviewed", prepared.stderr
        return self.script(
            "apply.py", "apply", name, AGENTFORM_API_KEY=write_key, VERDICT=outputs["verdict"],
            PR_NUMBER=outputs["pr"], GITHUB_RUN_ID=str(run_id), **LOCAL,
        )  # fmt: skip


@pytest.fixture
def repo(tmp_path: Path, github: tuple[str, State]) -> EnvironmentsRepo:
    api, state = github
    return EnvironmentsRepo(tmp_path / "repo", api, state)


def test_one_comment_then_staging_then_prod(repo: EnvironmentsRepo) -> None:
    repo.plan_pull_request(7, [])
    [comment] = repo.comments(7, "plan")
    assert comment.startswith("<!-- agentform:plan workspace=support -->\n")
    assert "### agentform plan: workspace `support`, environment `staging`" in comment
    assert "### agentform plan: workspace `support`, environment `prod`" in comment
    assert "### agentform env diff: `staging` and `prod`" in comment
    assert "prod gets the same changes as staging" in comment
    assert len(comment) <= 65_536
    repo.merge(7)

    wrong = repo.prepare_and_apply("prod", 1, WRITE["staging"])  # staging's key in prod's job
    assert wrong.returncode == 1
    assert "the API key belongs to organization acme-staging" in wrong.stderr + wrong.stdout + (
        "".join(repo.comments(7, "apply"))
    )
    staging = repo.prepare_and_apply("staging", 2, WRITE["staging"])
    assert staging.returncode == 0, staging.stderr
    prod = repo.prepare_and_apply("prod", 3, WRITE["prod"])
    assert prod.returncode == 0, prod.stderr
    reports = repo.comments(7, "apply")
    assert len(reports) == 2, "a report per environment, neither overwriting the other"
    assert all("5 succeeded, 0 failed" in r for r in reports)
    for name in ("staging", "prod"):
        env = {"PATH": str(BIN), "NO_COLOR": "1", "AGENTFORM_ENDPOINT": "local",
               f"{name.upper()}_AGENTFORM_API_KEY": WRITE[name]}  # fmt: skip
        again = subprocess.run(
            [str(BIN / "agentform"), "-C", str(repo.root / "workspace"), "plan", "--env", name,
             "--detailed-exitcode"],
            capture_output=True, text=True, env=env, check=False,
        )  # fmt: skip
        assert again.returncode == 0, again.stdout + again.stderr


def test_the_variant_workflows_pass_actionlint(tmp_path: Path) -> None:
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    for workflow in VARIANT.glob("*.yml"):
        shutil.copy(workflow, workflows / f"agentform-{workflow.name}")
    git(tmp_path, "init", "-q")
    actionlint = shutil.which("actionlint", path=str(BIN)) or "actionlint"
    files = sorted(str(p.relative_to(tmp_path)) for p in workflows.glob("*.yml"))
    result = subprocess.run([actionlint, *files], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(files) == 3
