"""`agentform validate` checks the workspace's test files as `agentform test` reads
them (Terraform's `validate` does the same; `--no-tests` skips them): their problems
are shown with the workspace's, at file:line, all together, before anything runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agentform.cli.main import cli


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def workspace(root: Path, tests: dict[str, str]) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "agentform.yaml").write_text("workspace: w\nendpoint: local\n")
    (root / "pools.yaml").write_text("profilePools:\n  - {name: eu, members: [bot-1]}\n")
    for name, text in tests.items():
        (root / "tests" / name).write_text(text)
    return root


GOOD = "tests:\n  - name: t\n    steps:\n      - execute: {agent: support-agent, pool: eu}\n"


def test_a_test_file_linked_from_outside_the_repository_fails_validate(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws", {"good.yaml": GOOD})
    (tmp_path / "outside.yaml").write_text(GOOD)
    os.symlink(tmp_path / "outside.yaml", root / "tests" / "q.yaml")
    result = run("validate", "-C", str(root))
    assert result.exit_code == 1, result.output
    assert (
        "tests/q.yaml: error: 'tests/q.yaml' leads outside the workspace: "
        "not allowed in workspace files" in result.output
    )
    assert run("test", "-C", str(root)).exit_code == 1  # as `test` refuses it


def test_a_test_file_linking_nowhere_fails_validate(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws", {"good.yaml": GOOD})
    os.symlink("../missing/shared.yaml", root / "tests" / "q.yaml")
    result = run("validate", "-C", str(root))
    assert result.exit_code == 1, result.output
    assert "tests/q.yaml: error: a link to a file that does not exist" in result.output
    assert run("test", "-C", str(root)).exit_code == 1  # as `test` refuses it


def test_test_files_in_a_link_loop_fail_validate_and_test_at_their_files(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws", {"good.yaml": GOOD})
    os.symlink("l1.yaml", root / "tests" / "l2.yaml")
    os.symlink("l2.yaml", root / "tests" / "l1.yaml")
    for command in ("validate", "test"):
        result = run(command, "-C", str(root))
        assert result.exit_code == 1, result.output
        assert "Unexpected error" not in result.output, result.output
        for name in ("l1.yaml", "l2.yaml"):
            assert f"tests/{name}: error: a link loop (the link leads back to itself)" in (
                result.output
            ), result.output


def test_a_test_files_problems_are_shown_with_the_workspaces_at_their_lines(
    tmp_path: Path,
) -> None:
    bad = (
        "tests:\n  - name: t\n    stepz: []\n  - name: u\n    steps:\n"
        "      - execute: {agent: support-agnt, pool: ue}\n"
    )
    root = workspace(tmp_path / "ws", {"bad.yaml": bad, "good.yaml": GOOD})
    (root / "more.yaml").write_text("profilePools:\n  - name: x\n    membrs: []\n")
    result = run("validate", "-C", str(root))
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert "more.yaml:3:5: error: profilePools.0.membrs: unknown key (did you mean 'members'?)" in (
        lines
    )
    assert any(line.startswith("tests/bad.yaml:3:5: error: tests.0.stepz: ") for line in lines)
    assert (
        "tests/bad.yaml:6:19: error: agent 'support-agnt' is not known "
        "(did you mean 'support-agent'?)" in lines
    )
    assert "3 problems; nothing was changed." in lines


def test_the_names_a_test_uses_are_checked_against_the_workspace(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws", {"t.yaml": GOOD.replace("pool: eu", "pool: ue")})
    result = run("validate", "-C", str(root))
    assert result.exit_code == 1, result.output
    assert "tests/t.yaml:4:41: error: pool 'ue' is not known (known: eu)" in (result.output)


def test_no_tests_skips_them_and_valid_tests_are_counted(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws", {"t.yaml": "tests: [{name: t, stepz: []}]\n"})
    skipped = run("validate", "--no-tests", "-C", str(root))
    assert skipped.exit_code == 0, skipped.output
    assert "test" not in skipped.output
    (root / "tests" / "t.yaml").write_text(GOOD)
    (root / "tests" / "seed.yaml").write_text("organizations: [{name: o}]\n")  # a seed: not a test
    checked = run("validate", "-C", str(root))
    assert checked.exit_code == 0, checked.output
    assert "Valid: 1 test file, 1 test.\n" in checked.output


def test_a_problem_of_a_test_file_is_said_once_for_every_environment(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws", {"t.yaml": "tests: [{name: t, stepz: []}]\n"})
    (root / "agentform.yaml").write_text(
        "workspace: w\nendpoint: local\nenvironments: {a: {}, b: {}}\n"
    )
    result = run("validate", "-C", str(root))
    assert result.exit_code == 1, result.output
    assert result.output.count("stepz") == 1, result.output
    assert "environment a: " not in result.output


def test_the_tests_of_a_workspace_that_does_not_load_are_still_checked(tmp_path: Path) -> None:
    """Their format, their seed's agents: the workspace's names are not known."""
    root = workspace(
        tmp_path / "ws", {"t.yaml": GOOD.replace("support-agent", "nobody").replace("eu", "zz")}
    )
    (root / "pools.yaml").write_text("profilePools: [{name: eu, membrs: []}]\n")
    result = run("validate", "-C", str(root))
    assert result.exit_code == 1, result.output
    assert "tests/t.yaml:4:19: error: agent 'nobody' is not known" in result.output
    assert "pool 'zz'" not in result.output  # the pools are not known: not checked


def test_validate_all_checks_each_workspaces_tests(tmp_path: Path) -> None:
    workspace(tmp_path / "a", {"t.yaml": GOOD})
    workspace(tmp_path / "b", {"t.yaml": "tests: [{name: t, stepz: []}]\n"})
    (tmp_path / "b" / "agentform.yaml").write_text("workspace: b\nendpoint: local\n")
    result = run("validate", "--all", str(tmp_path))
    assert result.exit_code == 1, result.output
    assert "b/tests/t.yaml:1:19: error: tests.0.stepz: unknown field" in result.output
    assert "1 problem in 1 of 2 workspaces" in result.output
    assert run("validate", "--all", "--no-tests", str(tmp_path)).exit_code == 0


def test_nothing_is_said_valid_when_something_fails(tmp_path: Path) -> None:
    """The workspace's files are fine, a policy file and a test file are not: no
    "Valid:" line above the problems of an exit 1 (each is said only when all is)."""
    root = workspace(tmp_path / "ws", {"t.yaml": "tests: [{name: t, stepz: []}]\n"})
    (root / "policies").mkdir()
    (root / "policies" / "p.yaml").write_text("rules: [{name: r, levle: advisory}]\n")
    result = run("validate", "-C", str(root))
    assert result.exit_code == 1, result.output
    assert "Valid" not in result.output, result.output
    assert "policies/p.yaml:1:" in result.output and "tests/t.yaml:1:19:" in result.output
    (root / "policies" / "p.yaml").write_text(
        "rules:\n  - name: r\n    level: advisory\n    deny: 'false'\n    message: \"'m'\"\n"
    )
    (root / "tests" / "t.yaml").write_text(GOOD)
    result = run("validate", "-C", str(root))
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "Valid: 2 files, 1 object (workspace w).",
        "Valid: 1 policy file, 1 rule.",
        "Valid: 1 test file, 1 test.",
    ]


def test_a_tests_directory_leading_outside_is_refused_unwalked(tmp_path: Path) -> None:
    """tests/ a link to / would have every file of the machine walked and read by a
    pre-commit hook; it is refused as a whole, named as written."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "t.yaml").write_text(GOOD)
    root = workspace(tmp_path / "ws", {})
    (root / "tests").rmdir()
    os.symlink(outside, root / "tests")
    for command in ("validate", "test"):
        result = run(command, "-C", str(root))
        assert result.exit_code == 1, result.output
        assert result.output.splitlines()[0] == (
            "tests: error: 'tests' leads outside the workspace: not allowed in workspace files"
        )
        assert str(outside) not in result.output


def test_a_linked_test_file_is_refused_unread_even_when_it_would_pass_for_a_seed(
    tmp_path: Path,
) -> None:
    root = workspace(tmp_path / "ws", {"t.yaml": GOOD})
    (tmp_path / "seed.yaml").write_text("organizations: [{name: o}]\n")
    os.symlink(tmp_path / "seed.yaml", root / "tests" / "s.yaml")
    result = run("validate", "-C", str(root))
    assert result.exit_code == 1, result.output
    assert "tests/s.yaml: error: 'tests/s.yaml' leads outside the workspace" in result.output


def test_a_test_file_through_a_linked_directory_is_named_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.yaml").write_text(GOOD)
    root = workspace(tmp_path / "ws", {})
    os.symlink(outside, root / "tests" / "sub")
    monkeypatch.chdir(root)
    result = run("test", "tests/sub")
    assert result.exit_code == 1, result.output
    assert result.output.splitlines()[0] == (
        "tests/sub/x.yaml: error: 'tests/sub/x.yaml' leads outside the workspace: "
        "not allowed in workspace files"
    )


def test_the_test_files_are_found_once_for_every_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tests/ was walked, and each file opened to tell a seed, once per environment."""
    from agentform.testing import files

    root = workspace(tmp_path / "ws", {"good.yaml": GOOD})
    (root / "agentform.yaml").write_text(
        "workspace: w\nendpoint: local\nenvironments:\n  staging: {}\n  prod: {}\n"
    )
    opened: list[Path] = []
    told = files._is_seed

    def counted(path: Path) -> bool:
        opened.append(path)
        return told(path)

    monkeypatch.setattr(files, "_is_seed", counted)
    result = run("validate", "-C", str(root))
    assert result.exit_code == 0, result.output
    assert result.output.endswith("Valid: 1 test file, 1 test.\n")
    assert [p.name for p in opened] == ["good.yaml"]


def test_a_name_one_environment_lacks_is_said_for_that_environment(tmp_path: Path) -> None:
    """The files are found once, and checked against each environment's names."""
    root = workspace(tmp_path / "ws", {"good.yaml": GOOD})
    (root / "agentform.yaml").write_text(
        "workspace: w\nendpoint: local\nenvironments: {a: {}, b: {}}\n"
    )
    (root / "pools.yaml").write_text(
        "profilePools:\n  - {name: \"{{ 'eu' if env_name == 'a' else 'us' }}\", members: [bot-1]}\n"
    )
    result = run("validate", "-C", str(root))
    assert result.exit_code == 1, result.output
    said = [line for line in result.output.splitlines() if "'eu'" in line]
    assert len(said) == 1 and "environment b: " in said[0], result.output
