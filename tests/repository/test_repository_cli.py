"""`validate --all` and `list --all` in a repository: every workspace its globs
name, in every environment, found from anywhere inside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agentform.cli.main import cli
from tests.repository.layout import ORG, STAGING_ORG, company, write


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_validate_all_alone_validates_every_pair_of_the_repository(tmp_path: Path) -> None:
    company(tmp_path)
    write(tmp_path, {"teams/stray/agentform.yaml": "workspace: stray\n"})
    (tmp_path / "agentform-repository.yaml").write_text("workspaces: [teams/pay*, teams/sup*]\n")
    result = run("-C", str(tmp_path / "teams" / "payments"), "validate", "--all")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == (
        "teams/stray/agentform.yaml: warning: not a workspace of the repository: no glob of "
        "workspaces: in agentform-repository.yaml names it, so it is not validated, "
        "planned or applied"
    )
    assert lines[1].startswith("Valid: 2 workspaces (")
    assert lines[1].count("(environment ") == 4


def test_a_shared_file_problem_is_said_once_per_workspace_reading_it(tmp_path: Path) -> None:
    company(tmp_path)
    write(
        tmp_path,
        {"common/alerts.j2": "  - name: {{ workspace }}-alerts\n    members: [{{ nope }}]\n"},
    )
    result = run("-C", str(tmp_path), "validate", "--all")
    assert result.exit_code == 1
    found = [line for line in result.output.splitlines() if "error:" in line]
    assert len(found) == 2 and all("common/alerts.j2:" in line for line in found)
    assert [line.rsplit("(read by workspace ", 1)[1] for line in found] == [
        "teams/payments)",
        "teams/support)",
    ]


def test_widening_one_team_owns_is_refused_by_validate_all(tmp_path: Path) -> None:
    company(tmp_path)
    root = tmp_path / "teams/support/agentform.yaml"
    root.write_text(root.read_text().replace("['support-*']", "['support-*', 'pay*']"))
    result = run("-C", str(tmp_path), "validate", "--all")
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == (
        "teams/support/agentform.yaml: error: workspaces teams/payments (environment staging) "
        "and teams/support (environment staging) both own names on "
        "https://agents.example.com/agents/v2, "
        f"organization {STAGING_ORG}: profilePools: 'payments-*' and 'pay*' "
        "(they would prune each other's objects: make their owns disjoint)"
    )
    # each overlap is placed in one workspace's file: counted once, there
    assert result.output.splitlines()[-1] == (
        "2 problems in 1 of 2 workspaces; nothing was changed."
    )


def test_list_all_lists_every_pair_with_its_organization_and_owns(tmp_path: Path) -> None:
    company(tmp_path)
    text = run("-C", str(tmp_path / "common"), "list", "--all")
    assert text.exit_code == 0, text.output
    assert text.output.splitlines()[:3] == [
        "WORKSPACE       ENVIRONMENT  ORGANIZATION                          OWNS",
        f"teams/payments  prod         {ORG}  profilePools: payments-*; "
        "batches: support-agent/payments-*",
        f"teams/payments  staging      {STAGING_ORG}  profilePools: payments-*; "
        "batches: support-agent/payments-*",
    ]
    listed = json.loads(run("-C", str(tmp_path), "list", "--all", "--format", "json").output)
    assert [(p["workspace"], p["environment"]) for p in listed] == [
        ("teams/payments", "prod"),
        ("teams/payments", "staging"),
        ("teams/support", "prod"),
        ("teams/support", "staging"),
    ]
    assert listed[3]["owns"] == {
        "profilePools": ["support-*"],
        "batches": ["support-agent/support-*"],
    }


def test_list_all_of_one_workspace_and_environment_loads_that_pair_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a pipeline's pair job asks for its own pair: loading every workspace of the
    repository in each of N jobs was N x N loads. Another workspace's broken template
    is not even read."""
    company(tmp_path)
    write(tmp_path, {"teams/support/bad.yaml": "profilePools:\n  - name: {{ nope }}\n"})
    monkeypatch.chdir(tmp_path)
    args = ("-C", "teams/payments", "list", "--all", "teams/payments", "--format", "json")
    one = run(*args, "--env", "prod")
    assert one.exit_code == 0, one.output
    assert [(p["workspace"], p["environment"]) for p in json.loads(one.output)] == [
        ("teams/payments", "prod")
    ]
    both = run(*args)  # every environment of the workspace
    assert [p["environment"] for p in json.loads(both.output)] == ["prod", "staging"]
    typo = run(*args, "--env", "prodd")
    assert typo.exit_code == 1 and "has environment prodd (did you mean 'prod'?)" in typo.output
    elsewhere = run("list", "--all", "common")
    assert elsewhere.exit_code == 1
    assert "no workspace of the repository under common" in elsewhere.output


def test_list_all_outside_a_repository_says_so(tmp_path: Path) -> None:
    result = run("-C", str(tmp_path), "list", "--all")
    assert result.exit_code == 1
    assert "no agentform-repository.yaml in" in result.output


@pytest.mark.parametrize("text", ["workspaces: []\n", "workspaces: [teams/*]\nextra: 1\n"])
def test_a_bad_repository_file_stops_validate_all_at_its_line(tmp_path: Path, text: str) -> None:
    company(tmp_path)
    (tmp_path / "agentform-repository.yaml").write_text(text)
    result = run("-C", str(tmp_path), "validate", "--all")
    assert result.exit_code == 1
    assert "agentform-repository.yaml:" in result.output and "Traceback" not in result.output
