"""The pre-commit hooks of .pre-commit-hooks.yaml, run through `pre-commit try-repo`
on a scratch git repository, as a team's repository would run them.

Cost: the hooks are `language: python`, so pre-commit builds an environment with
agentform installed (about 10 s of CPU; up to a minute or more of wall time, most of
it pip talking to the index). try-repo keeps no store between calls, so the test
makes exactly one call, which runs both hooks in one environment.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.precommit  # pre-commit's own environment and hooks

REPO = Path(__file__).parents[1]
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    root = tmp_path_factory.mktemp("precommit")
    repo = root / "team-repo"
    env = {
        **os.environ,
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        # The hook environment runs once: compiling every installed module to
        # bytecode first (pip's default, a third of the build) is wasted work.
        "PIP_COMPILE": "0",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    source, ref = hook_repository(root, env)
    env["HOOKS_REPO"], env["HOOKS_REF"] = str(source), ref
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
    subprocess.run([str(BIN / "agentform"), "init", str(repo)], check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "workspace"], cwd=repo, check=True, env=env)
    yield repo, env
    shutil.rmtree(root, ignore_errors=True)


def hook_repository(root: Path, env: dict[str, str]) -> tuple[Path, str]:
    """This repository at one fixed commit. Uncommitted changes (while developing) go
    into one commit of a clone, made once: pre-commit would make a new one, and so a
    new environment, on every try-repo."""

    def git(*args: str, cwd: Path = REPO, **kw: object) -> str:
        done = subprocess.run(
            ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, **kw
        )  # type: ignore[call-overload]
        return str(done.stdout.decode() if isinstance(done.stdout, bytes) else done.stdout)

    head = git("rev-parse", "HEAD").strip()
    changes = subprocess.run(
        ["git", "diff", "--binary", "HEAD"], cwd=REPO, capture_output=True, check=True
    ).stdout
    if not changes:
        return REPO, head
    shadow = root / "hooks-repo"
    git("clone", "-q", str(REPO), str(shadow))
    git("checkout", "-q", head, cwd=shadow)
    git("apply", "--binary", "-", cwd=shadow, input=changes)
    git("add", "-A", cwd=shadow)  # new files too: `commit -a` takes only tracked ones
    git("commit", "-qm", "uncommitted changes", cwd=shadow)
    return shadow, git("rev-parse", "HEAD", cwd=shadow).strip()


def try_repo(scratch: tuple[Path, dict[str, str]]) -> subprocess.CompletedProcess[str]:
    """Every hook of the repository on every file (each try-repo builds its own
    environment in a temporary store, so the tests make as few calls as they can)."""
    repo, env = scratch
    return subprocess.run(
        [
            str(BIN / "pre-commit"),
            "try-repo",
            env["HOOKS_REPO"],
            "--ref",
            env["HOOKS_REF"],
            "--all-files",
        ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.slow
def test_hooks_run_on_the_workspace_and_the_schema_files(
    scratch: tuple[Path, dict[str, str]],
) -> None:
    """One try-repo (one environment built): validate reports the broken file of the
    workspace; the schema hook checks each committed schema file and names only the
    stale one."""
    repo, env = scratch
    pools = repo / "pools.yaml"
    pools.write_text(pools.read_text().replace("members:", "membrs:"))
    (repo / "old").mkdir()
    stale = (repo / "agentform.schema.json").read_text().replace('"title"', '"Title"', 1)
    (repo / "old" / "agentform.schema.json").write_text(stale)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    result = try_repo(scratch)
    assert result.returncode == 1, result.stdout + result.stderr
    assert re.search(r"agentform validate\.+Failed", result.stdout)
    assert re.search(r"pools.yaml:\d+:5: error: profilePools.0.membrs: unknown key", result.stdout)
    assert "did you mean 'members'?" in result.stdout
    assert re.search(r"agentform schema is current\.+Failed", result.stdout)
    assert "old/agentform.schema.json: not the current schema" in result.stdout
    assert "\nagentform.schema.json: not the current schema" not in result.stdout
