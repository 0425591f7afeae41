"""Defects seen when a company tried a repository of two teams x two environments
(issue 26 §5), each shown failing first."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from agentform.cli.main import cli
from tests.repository.layout import company, write


def run(*args: str, env: dict[str, str | None] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), env=env)


WEBHOOK = """\
webhooks:
  - name: payments-hook
    url: https://hooks.example.com/payments
    headers: {Authorization: "Bearer {{ secret('PAYMENTS_WEBHOOK_TOKEN') }}"}
"""


def test_validate_all_says_a_workspace_unset_secrets_only_of_that_workspace(
    tmp_path: Path,
) -> None:
    """It said "teams/support: secrets PAYMENTS_WEBHOOK_TOKEN … not set": the run's
    one registry of secrets gathered every workspace's unset names."""
    root = company(tmp_path)
    write(root, {"teams/payments/hooks.yaml": WEBHOOK})
    owns = root / "teams/payments/agentform.yaml"
    owns.write_text(
        owns.read_text().replace("profilePools: [", "webhooks: ['payments-*'], profilePools: [")
    )
    result = run("-C", str(root), "validate", "--all", env={"PAYMENTS_WEBHOOK_TOKEN": None})
    assert result.exit_code == 0, result.output
    notes = [line for line in result.output.splitlines() if "note:" in line]
    assert notes and all(line.startswith("teams/payments") for line in notes), notes


def test_an_ownership_overlap_is_listed_with_the_workspace_other_problems(tmp_path: Path) -> None:
    """The overlap was said only once the widening workspace had no other problem."""
    root = company(tmp_path)
    support = root / "teams/support/agentform.yaml"
    support.write_text(support.read_text().replace("['support-*']", "['support-*', 'pay*']"))
    typo = "profilePools:\n  - name: support-x\n    membres: []\n"
    write(root, {"teams/support/typo.yaml": typo})
    result = run("-C", str(root), "validate", "--all")
    assert result.exit_code == 1
    found = [line for line in result.output.splitlines() if "error:" in line]
    assert any("typo.yaml:3:5: error: profilePools.0.membres: unknown key" in f for f in found)
    assert any("both own names on" in f for f in found), result.output


def test_validate_all_counts_the_workspaces_that_have_problems(tmp_path: Path) -> None:
    """It said "1 problem in 2 workspaces" when one of two workspaces had it."""
    company(tmp_path)
    write(tmp_path, {"teams/support/bad.yaml": "profilePools:\n  - name: {{ nope }}\n"})
    result = run("-C", str(tmp_path), "validate", "--all")
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (
        "1 problem in 1 of 2 workspaces; nothing was changed."
    )


def test_list_all_lists_the_pairs_it_can_when_one_workspace_has_a_template_error(
    tmp_path: Path,
) -> None:
    """One workspace's broken template made `list --all` list nothing at all,
    though each pair's organization and owns are known from agentform.yaml."""
    company(tmp_path)
    write(tmp_path, {"teams/support/bad.yaml": "profilePools:\n  - name: {{ nope }}\n"})
    result = run("-C", str(tmp_path), "list", "--all")
    assert result.exit_code == 1
    lines = result.output.splitlines()
    rows = [
        line.split()[:2] for line in lines if line.split()[0] in ("teams/payments", "teams/support")
    ]
    assert rows == [
        ["teams/payments", "prod"],
        ["teams/payments", "staging"],
        ["teams/support", "prod"],
        ["teams/support", "staging"],
    ]
    assert any(line.startswith("teams/support/bad.yaml:2:") for line in lines), lines
    assert lines[-1] == "1 problem; list changes nothing.", lines  # not "nothing was changed"


def test_a_local_endpoint_is_one_state_per_workspace_directory_and_environment() -> None:
    """`endpoint: local` keeps a database per workspace directory and environment
    (cli/endpoint.py local_state): two members on one of them overlap whatever
    their names; two environments of one workspace do not."""
    from agentform.config.repository import Member, overlaps
    from agentform.config.settings import Settings

    def member(name: str, environment: str | None) -> Member:
        owns = {"profilePools": ["payments-*"]}
        settings = Settings("payments", owns=owns, environment=environment)
        return Member(name, "teams/payments/agentform.yaml", settings)

    same = overlaps([member("a", "staging"), member("b", "staging")])
    assert len(same) == 1 and "both own names on local" in same[0].summary, same
    assert overlaps([member("a", "staging"), member("a", "prod")]) == []
    assert overlaps([member("a", None), member("b", "prod")]) == []
