"""A reader that goes away early (`agentform apply | head -3`): output is dropped
once stdout is closed, quietly, and the run itself goes on to the end."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentform.cli.main import cli


def with_stdout_closed(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Runs `agentform ARGS` in a new interpreter whose stdout reader has already gone."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentform", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the child has written anything
    err = proc.stderr.read()
    code = proc.wait(timeout=120)
    return subprocess.CompletedProcess(proc.args, code, "", err)


def in_process(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def test_apply_with_stdout_closed_completes_every_change(quickstart: Path) -> None:
    done = with_stdout_closed("apply", "--auto-approve", cwd=quickstart)
    assert done.stderr == ""  # no traceback, no crash log, no shutdown noise
    assert done.returncode == 0  # the apply's outcome
    assert not list((quickstart / ".agentform").glob("crash-*.log"))
    code, output = in_process("plan", "--detailed-exitcode", "-C", str(quickstart))
    assert code == 0 and "No changes." in output  # every change was made


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("drift",), 2),  # nothing applied: everything is missing
        (("show", "saved.plan"), 0),
        (("export",), 0),
        (("plan",), 0),
    ],
)
def test_read_commands_with_stdout_closed_are_quiet(
    quickstart: Path, args: tuple[str, ...], code: int
) -> None:
    saved = in_process("plan", "--out", str(quickstart / "saved.plan"), "-C", str(quickstart))
    assert saved[0] == 0, saved[1]
    done = with_stdout_closed(*args, cwd=quickstart)
    assert (done.returncode, done.stderr) == (code, "")
