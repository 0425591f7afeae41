"""`agentform service run` without --db serves the state of the workspace of -C in
the environment chosen (cli/endpoint.py `local_state`), never a state no command uses."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentform.cli.main import cli


def _workspace(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["init", str(tmp_path / "teams/a"), "--env", "staging,prod"])
    assert result.exit_code == 0, result.output


def _run(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """The run on a busy port: what goes before the server's start, never serving."""
    cwd = os.getcwd()
    os.chdir(tmp_path)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        try:
            result = CliRunner().invoke(cli, [*args, "service", "run", "--port", port], env=env)
        finally:
            os.chdir(cwd)
    return result.exit_code, result.output


def test_a_workspace_with_environments_and_none_chosen_is_refused_naming_them(
    tmp_path: Path,
) -> None:
    _workspace(tmp_path)
    code, output = _run(tmp_path, "-C", "teams/a", env={"AGENTFORM_ENV": ""})
    assert code == 1
    assert "environments (staging, prod): choose one with --env NAME" in output
    assert "Traceback" not in output and "Agent Service on" not in output
    assert not (tmp_path / ".agentform").exists()
    assert not (tmp_path / "teams/a/.agentform").exists()


def test_an_environment_not_declared_is_refused_before_any_write(tmp_path: Path) -> None:
    _workspace(tmp_path)
    code, output = _run(tmp_path, "-C", "teams/a", env={"AGENTFORM_ENV": "prd"})
    assert code == 1
    assert "no environment 'prd'" in output and "did you mean 'prod'" in output, output
    assert "Traceback" not in output
    assert not (tmp_path / ".agentform").exists()
    assert not (tmp_path / "teams/a/.agentform").exists()


def _banner(
    cwd: Path, *args: str, env: dict[str, str] | None = None, after: tuple[str, ...] = ()
) -> str:
    """The first line of a real `service run --port 0` on loopback, then stopped."""
    cmd = [sys.executable, "-m", "agentform", *args, "service", "run", "--port", "0"]
    cmd += ["--delivery-workers", "0", *after]
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "AGENTFORM_ENV": "", **(env or {})},
    )
    try:
        assert proc.stdout is not None
        return proc.stdout.readline()
    finally:
        proc.terminate()
        proc.wait(60)
        if proc.stdout is not None:
            proc.stdout.close()


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.parametrize(
    ("args", "env"),
    [(("-C", "teams/a", "--env", "prod"), {}), (("-C", "teams/a"), {"AGENTFORM_ENV": "prod"})],
)
def test_serves_the_state_of_the_environment_of_the_workspace_of_c(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str]
) -> None:
    _workspace(tmp_path)
    banner = _banner(tmp_path, *args, env=env)
    state = Path("teams/a/.agentform/prod/service.db")
    assert banner.startswith("Agent Service on http://127.0.0.1:"), banner
    assert f"(database {state})" in banner, banner
    assert (tmp_path / state).is_file()
    assert not (tmp_path / ".agentform").exists()


@pytest.mark.slow
@pytest.mark.server
def test_outside_a_workspace_and_with_db_the_state_is_as_before(tmp_path: Path) -> None:
    assert "(database .agentform/service.db)" in _banner(tmp_path)
    _workspace(tmp_path)
    banner = _banner(tmp_path, "-C", "teams/a", "--env", "prod", after=("--db", "x.db"))
    assert "(database x.db)" in banner, banner
