"""`agentform affected`'s outputs: the shapes a workflow reads (json, github-matrix),
--why naming objects and the files that made them differ, and the refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agentform.cli.main import cli
from tests.repository.layout import company, write
from tests.repository.test_affected_history import git


def run(root: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-C", str(root), "affected", *args])


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    root = company(tmp_path / "repo")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return root


def test_json_and_matrix_list_the_pairs_a_changed_var_file_affects(repository: Path) -> None:
    write(repository, {"common/prod.vars.yaml": "region: eu-west\n"})
    commit = git(repository, "rev-parse", "HEAD").strip()
    found = json.loads(run(repository, "--base", "main", "--format", "json").output)
    assert found == {
        "base": commit,
        "affected": [
            {
                "workspace": f"teams/{team}",
                "environment": "prod",
                "reasons": [
                    f"objects: profilePools/{team}-alerts members "
                    "(common/alerts.j2:2, from common/prod.vars.yaml)"
                ],
            }
            for team in ("payments", "support")
        ],
    }
    matrix = run(repository, "--base", "main", "--format", "github-matrix")
    assert matrix.output == (
        '{"include":[{"workspace":"teams/payments","environment":"prod"},'
        '{"workspace":"teams/support","environment":"prod"}]}\n'
    )


def test_nothing_affected_is_an_empty_matrix_and_one_line(repository: Path) -> None:
    write(repository, {"README.md": "# agents ✓\n"})
    assert run(repository, "--base", "HEAD", "--format", "github-matrix").output == (
        '{"include":[]}\n'
    )
    assert run(repository, "--base", "HEAD").output == (
        "No workspace x environment is affected by the changes since HEAD.\n"
    )


def test_why_names_the_object_field_and_file(repository: Path) -> None:
    write(repository, {"common/alerts.j2": "  - name: {{ workspace }}-alerts\n    members: [ü]\n"})
    result = run(repository, "--base", "HEAD", "--why")
    assert result.output.splitlines() == [
        f"teams/{team} {env}: objects: profilePools/{team}-alerts members (common/alerts.j2:2)"
        for team in ("payments", "support")
        for env in ("prod", "staging")
    ]


def test_the_working_tree_and_index_are_left_as_they_were(repository: Path) -> None:
    write(repository, {"teams/payments/pools.yaml": "profilePools: []\n", "new.txt": "x\n"})
    before = git(repository, "status", "--porcelain")
    assert run(repository, "--base", "HEAD").exit_code == 0
    assert git(repository, "status", "--porcelain") == before
    assert (repository / "teams/payments/pools.yaml").read_text() == "profilePools: []\n"


@pytest.mark.parametrize("ref", ["no-such-branch", "--output=/tmp/agentform-stolen", "-h"])
def test_a_ref_that_names_no_commit_is_refused_without_running_an_option(
    repository: Path, ref: str
) -> None:
    result = run(repository, "--base", ref)
    assert result.exit_code == 1
    assert f"no commit {ref!r} in the git repository of" in result.output
    assert not Path("/tmp/agentform-stolen").exists()


def test_outside_a_repository_it_says_so(tmp_path: Path) -> None:
    result = run(tmp_path, "--base", "HEAD")
    assert result.exit_code == 1
    assert "no agentform-repository.yaml in" in result.output


def test_an_environment_no_longer_declared_is_not_said_to_have_lost_its_files(
    repository: Path,
) -> None:
    support = repository / "teams/support/agentform.yaml"
    support.write_text(support.read_text().split("  prod:")[0])
    lines = run(repository, "--base", "HEAD", "--why").output.splitlines()
    assert lines == [
        "teams/support prod: deleted: the workspace no longer declares this environment; "
        "deleting an environment deletes nothing live (its objects stay until they are "
        "deleted by hand or another workspace owns them)"
    ]


def test_a_workspace_no_glob_names_is_not_said_to_have_lost_its_files(repository: Path) -> None:
    listed = repository / "agentform-repository.yaml"
    listed.write_text(listed.read_text().replace("teams/*", "teams/pay*"))
    lines = run(repository, "--base", "HEAD", "--why").output.splitlines()
    assert [line.split(": deleted: ")[0] for line in lines] == [
        "teams/support prod",
        "teams/support staging",
    ], lines
    assert all(
        "no longer a workspace of the repository: no glob of workspaces: in "
        "agentform-repository.yaml names it" in line
        for line in lines
    ), lines


def test_the_matrix_leaves_out_a_deleted_pair_which_has_nothing_to_run(repository: Path) -> None:
    """A job of the matrix tests and plans its pair: a deleted pair has no files to
    run on (and deletes nothing); json and text still say it was deleted."""
    support = repository / "teams/support/agentform.yaml"
    support.write_text(support.read_text().split("  prod:")[0])
    write(repository, {"common/prod.vars.yaml": "region: eu-west\n"})
    matrix = run(repository, "--base", "HEAD", "--format", "github-matrix")
    assert matrix.output == '{"include":[{"workspace":"teams/payments","environment":"prod"}]}\n'
    found = json.loads(run(repository, "--base", "HEAD", "--format", "json").output)
    assert [(a["workspace"], a["reasons"][0].split(":")[0]) for a in found["affected"]] == [
        ("teams/payments", "objects"),
        ("teams/support", "deleted"),
    ]
