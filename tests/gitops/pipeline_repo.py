"""A repository of two teams x two environments sharing one include (the example
examples/gitops/repository), with the pipeline copied in as its README says, and the
jobs of its workflows run as GitHub runs them: a matrix job per pair, each in a
fresh output directory, artifacts passed through the fake GitHub."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentform.cli.endpoint import local_state
from agentform.service import create_app, read_seed
from tests.gitops.fake_github import State
from tests.gitops.test_pipeline import BIN, EXAMPLE, Repo, git

READ = {"staging": "staging-read-key", "prod": "prod-read-key"}
WRITE = {"staging": "staging-admin-key", "prod": "prod-admin-key"}
TEAMS = ("payments", "support")


@dataclass
class PullRequest:
    """What the plan workflow's run of a pull request did."""

    number: int
    head: str
    run: dict[str, Any]
    matrix: list[dict[str, Any]]
    pairs: dict[str, subprocess.CompletedProcess[str]] = field(default_factory=dict)
    comment: str = ""


class TeamsRepo(Repo):
    def __init__(self, root: Path, api: str, state: State) -> None:
        self.root, self.api, self.state = root, api, state
        shutil.copytree(EXAMPLE / "repository", root)
        shutil.copytree(EXAMPLE / "scripts", root / ".github" / "agentform")
        shutil.copy(EXAMPLE / "requirements.txt", root / ".github" / "agentform")
        for workflow in (EXAMPLE / "workflows").glob("*.yml"):
            target = root / ".github" / "workflows" / f"agentform-{workflow.name}"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(workflow, target)
        for team in TEAMS:  # each environment's embedded service holds both organizations
            for environment in ("staging", "prod"):
                db = local_state(root / "teams" / team, environment)
                create_app(db, seed=read_seed(root / "shared" / "seed.yaml"))
        self.start("two teams and the agentform pipeline")

    def change(self, path: str, old: str, new: str) -> None:
        file = self.root / path
        text = file.read_text() if file.exists() else ""
        assert old in text, (path, old)
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text.replace(old, new, 1) if old else text + new)

    def job(self, script: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        """One job of a workflow: a fresh output directory, as a new runner has."""
        shutil.rmtree(self.out, ignore_errors=True)
        return self.script(script, *args, **env)

    def plan_pull_request(
        self, number: int, edits: list[tuple[str, str, str]], body: str = ""
    ) -> PullRequest:
        """plan.yml: affected (validate --all, the matrix), a job per pair (its
        artifact), then the comment job with every artifact of the run."""
        git(self.root, "checkout", "-q", "-b", f"pr-{number}", "main")
        base = git(self.root, "rev-parse", "main")
        for edit in edits:
            self.change(*edit)
        head = self.commit(f"pull request {number}")
        self.state.open_pull(number, head, body)
        validated = self.job("validate.py")
        assert validated.returncode == 0, validated.stdout + validated.stderr
        affected = self.job("matrix.py", "affected", base)
        assert affected.returncode == 0, affected.stderr
        listed = (self.out / "affected.json").read_bytes()
        run = self.state.run(head)
        done = PullRequest(number, head, run, json.loads(self.outputs()["matrix"])["include"])
        self.state.upload(run, "agentform-affected", {"affected.json": listed})
        for pair in done.matrix:
            env = pair["environment"]
            result = self.job(
                "pr_pair.py", pair["workspace"], env or "", PLAN=str(pair["plan"]).lower(),
                BASE_SHA=base, AGENTFORM_READ_API_KEY=READ[env],
            )  # fmt: skip
            done.pairs[f"{pair['workspace']} {env}"] = result
            files = {p.name: p.read_bytes() for p in (self.out / pair["slug"]).iterdir()}
            self.state.upload(run, f"agentform-plan-{pair['slug']}", files)
            if result.returncode != 0:
                run["conclusion"] = "failure"
        self.gather(run, "agentform-plan-")
        self.out.mkdir(exist_ok=True)
        (self.out / "affected.json").write_bytes(listed)
        posted = self.script("pr_comment.py", PR_NUMBER=str(number))
        assert posted.returncode == 0, posted.stderr
        [done.comment] = self.comments(number, "pull-request")
        git(self.root, "checkout", "-q", "main")
        return done

    def gather(self, run: dict[str, Any], prefix: str) -> None:
        """actions/download-artifact of the run's artifacts named PREFIX-SLUG, each
        into $AGENTFORM_OUT/SLUG (what the workflows' gathering step does)."""
        shutil.rmtree(self.out, ignore_errors=True)
        for artifact in self.state.artifacts:
            name = artifact["name"]
            if artifact["workflow_run"]["id"] == run["id"] and name.startswith(prefix):
                import io
                import zipfile

                with zipfile.ZipFile(io.BytesIO(self.state.blobs[artifact["id"]])) as zipped:
                    zipped.extractall(self.out / name.removeprefix(prefix))

    def merge(self, number: int) -> str:
        """Merges the pull request; returns main's commit before it (the push's before)."""
        before = git(self.root, "rev-parse", "main")
        super().merge(number)
        return before

    def deploy(self, before: str, run_id: int) -> dict[str, Any]:
        """apply.yml for the push after `before`, run now (main's HEAD may be newer):
        affected, prepare per pair, verdicts, apply per pair to apply."""
        pushed = git(self.root, "rev-list", "--first-parent", f"{before}..main").splitlines()[-1]
        git(self.root, "checkout", "-q", pushed)  # the affected job checks out the push
        affected = self.job("matrix.py", "affected", before)
        git(self.root, "checkout", "-q", "main")  # prepare: main's HEAD now
        assert affected.returncode == 0, affected.stderr
        run = self.state.run(git(self.root, "rev-parse", "HEAD"), ".github/workflows/x.yml", "push")
        run["id"] = run_id
        prepared: dict[str, subprocess.CompletedProcess[str]] = {}
        for pair in json.loads(self.outputs()["matrix"])["include"]:
            env = pair["environment"]
            result = self.job(
                "apply.py", "prepare", pair["workspace"], env or "",
                AGENTFORM_READ_API_KEY=READ[env], GITHUB_RUN_ID=str(run_id),
            )  # fmt: skip
            prepared[f"{pair['workspace']} {env}"] = result
            files = {p.name: p.read_bytes() for p in (self.out / pair["slug"]).iterdir()}
            self.state.upload(run, f"agentform-apply-{pair['slug']}", files)
        self.gather(run, "agentform-apply-")
        self.script("apply.py", "verdicts")
        to_apply = json.loads(self.outputs()["matrix"])["include"]
        return {"prepared": prepared, "to_apply": to_apply, "run": run}

    def apply_pair(
        self, pair: dict[str, Any], run: dict[str, Any]
    ) -> subprocess.CompletedProcess[str]:
        """apply.yml's apply job of one pair (in its GitHub environment)."""
        self.gather(run, "agentform-apply-")
        git(self.root, "checkout", "-q", pair["sha"])
        env = pair["environment"]
        result = self.script(
            "apply.py", "apply", pair["workspace"], env or "", AGENTFORM_API_KEY=WRITE[env],
            VERDICT=pair["verdict"], PR_NUMBER=pair["pr"], GITHUB_RUN_ID=str(run["id"]),
        )  # fmt: skip
        git(self.root, "checkout", "-q", "main")
        return result

    def pair_in_sync(self, team: str, env: str) -> bool:
        done = subprocess.run(
            [str(BIN / "agentform"), "-C", str(self.root / "teams" / team), "plan", "--env", env,
             "--detailed-exitcode"],
            capture_output=True, text=True, check=False,
            env={"PATH": f"{BIN}:/usr/bin:/bin",
                 f"{env.upper()}_AGENTFORM_API_KEY": READ[env], "NO_COLOR": "1"},
        )  # fmt: skip
        return done.returncode == 0
