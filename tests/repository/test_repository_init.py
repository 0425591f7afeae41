"""`agentform init teams/NAME --env staging,prod` inside a repository: a workspace
wired to it, which validates with the others and is affected as new."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from agentform.cli.main import cli
from tests.repository.layout import ORG, STAGING_ORG, company
from tests.repository.test_affected_history import git


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def test_a_new_team_is_wired_to_the_repository_and_affected_as_new(tmp_path: Path) -> None:
    root = company(tmp_path)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    made = run("init", str(root / "teams" / "billing"), "--env", "staging,prod")
    assert made.exit_code == 0, made.output
    text = (root / "teams/billing/agentform.yaml").read_text()
    assert 'profilePools: ["billing-*"]' in text
    assert f'organizationId: "{STAGING_ORG}"' in text and f'organizationId: "{ORG}"' in text
    assert 'varFiles: ["../../common/prod.vars.yaml"]' in text
    assert "endpoint:" not in text  # inherited from the repository's defaults
    assert (root / "teams/billing/tests/smoke.yaml").is_file()
    valid = run("-C", str(root), "validate", "--all")
    assert valid.exit_code == 0, valid.output
    found = run("-C", str(root), "affected", "--base", "main", "--format", "json")
    assert [
        (a["workspace"], a["environment"], a["reasons"][0].split(":")[0])
        for a in json.loads(found.output)["affected"]
    ] == [("teams/billing", "prod", "new"), ("teams/billing", "staging", "new")]


def test_a_name_whose_globs_overlap_another_team_is_refused(tmp_path: Path) -> None:
    root = company(tmp_path)
    result = run("init", str(root / "teams" / "payments-eu"), "--env", "staging,prod")
    assert result.exit_code == 1
    assert result.output == (
        "Error: a workspace named 'payments-eu' would own names teams/payments owns: "
        "profilePools: 'payments-eu-*' and 'payments-*'; choose another name "
        "(nothing was written)\n"
    )
    assert not (root / "teams" / "payments-eu").exists()


def test_a_directory_the_globs_do_not_name_is_refused(tmp_path: Path) -> None:
    root = company(tmp_path)
    result = run("init", str(root / "apps" / "x"))
    assert result.exit_code == 1
    assert "apps/x is not a workspace of the repository: no glob of workspaces:" in result.output
    assert not (root / "apps").exists()


def test_outside_a_repository_env_declares_the_environments(tmp_path: Path) -> None:
    made = run("init", str(tmp_path / "ws"), "--env", "staging,prod")
    assert made.exit_code == 0, made.output
    assert (
        "environments:\n  staging: {}\n  prod: {}\n" in (tmp_path / "ws/agentform.yaml").read_text()
    )
    assert run("-C", str(tmp_path / "ws"), "validate").exit_code == 0
    bad = run("init", str(tmp_path / "other"), "--env", "staging,prod,staging")
    assert bad.exit_code == 1 and "an environment is named twice" in bad.output
