"""`agentform init` writes a test that passes; the workspace's tests/ is never read
as workspace objects; a run needs tests and says so."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agentform.cli.main import cli
from agentform.config.files import workspace_files


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.mark.parametrize("endpoint", ["local", "https://agents.example.com/agents/v2"])
def test_the_test_init_writes_passes_and_leaves_nothing_behind(
    tmp_path: Path, endpoint: str
) -> None:
    root = tmp_path / "ws"
    assert run("init", str(root), "--endpoint", endpoint).exit_code == 0
    before = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    assert "tests/smoke.yaml" in before
    result = run("-C", str(root), "test")
    assert result.exit_code == 0, result.output
    assert result.output.endswith("1 passed, 0 failed\n")
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == before


def test_tests_directory_is_not_read_as_workspace_objects(tmp_path: Path) -> None:
    (tmp_path / "agentform.yaml").write_text("workspace: w\nendpoint: local\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "a.yaml").write_text("profilePools: [{name: from-a-test}]\n")
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "tests.yaml").write_text("profilePools: [{name: p}]\n")
    names = [p.relative_to(tmp_path).as_posix() for p in workspace_files(tmp_path)]
    assert names == ["agentform.yaml", "more/tests.yaml"]


def test_a_workspace_without_tests_says_where_they_go(tmp_path: Path) -> None:
    (tmp_path / "agentform.yaml").write_text("workspace: w\nendpoint: local\n")
    result = run("-C", str(tmp_path), "test")
    assert result.exit_code == 1
    assert (
        result.output == f"Error: no tests: write them in {tmp_path / 'tests'}/*.yaml "
        "(agentform init writes an example)\n"
    )


@pytest.mark.parametrize("text", ["some notes\n", "- a\n", "\n"])
def test_a_test_file_that_is_not_a_mapping_says_what_it_must_hold(
    tmp_path: Path, text: str
) -> None:
    """Notes or a list in tests/ get the shape a test file has, not pydantic's
    "body: Input should be a valid dictionary or instance of TestFile"."""
    assert run("init", str(tmp_path)).exit_code == 0
    (tmp_path / "tests" / "notes.yaml").write_text(text)
    result = run("-C", str(tmp_path), "test")
    assert result.exit_code == 1
    assert result.output.startswith(
        "tests/notes.yaml:1:1: error: a test file is a mapping with a list of tests "
        "(tests: [{name: ..., steps: [...]}])\n"
    ), result.output


def test_a_workspace_with_environments_is_tested_in_the_one_chosen(tmp_path: Path) -> None:
    """`test --env staging` renders the files with staging's var files and applies
    to staging's organization of the test's seed; without an environment it is
    refused as plan is, not rendered with no environment's variables."""
    root = tmp_path / "environments"
    example = Path(__file__).parents[2] / "examples" / "environments"
    shutil.copytree(example, root, ignore=shutil.ignore_patterns(".agentform"))
    (root / "tests").mkdir()
    (root / "tests" / "plan.yaml").write_text(
        "seed: ../seed.yaml\ntests:\n  - name: applied\n    steps:\n      - expect: {plan: empty}\n"
    )
    unchosen = CliRunner().invoke(cli, ["-C", str(root), "test"], env={"AGENTFORM_ENV": None})
    assert unchosen.exit_code == 1
    assert "declares environments (staging, prod): choose one with --env" in unchosen.output
    for name in ("staging", "prod"):
        chosen = run("-C", str(root), "test", "--env", name)
        assert chosen.exit_code == 0, chosen.output
        assert chosen.output.endswith("1 passed, 0 failed\n")


def test_a_filter_that_selects_nothing_is_an_error(tmp_path: Path) -> None:
    assert run("init", str(tmp_path)).exit_code == 0
    result = run("-C", str(tmp_path), "test", "--filter", "no such test")
    assert result.exit_code == 1
    assert result.output == "Error: no test's file or name holds 'no such test'\n"


def test_a_directory_runs_its_test_files_and_the_filter_matches_file_paths(
    tmp_path: Path,
) -> None:
    assert run("init", str(tmp_path)).exit_code == 0
    result = run("-C", str(tmp_path), "test", str(tmp_path / "tests"), "--filter", "smoke.yaml")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("PASS tests/smoke.yaml: the example pool runs")
