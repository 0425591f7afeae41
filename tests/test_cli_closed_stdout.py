"""A reader that goes away early (`agentform apply | head -3`, or stderr's in
`agentform validate 2>&1 >/dev/null | head -0`) or a stream closed from the start
(`agentform plan 2>&-`): output is dropped, quietly, and the run itself goes on to
the end."""

from __future__ import annotations

import json
import os
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
    proc.stderr.close()
    code = proc.wait(timeout=120)
    return subprocess.CompletedProcess(proc.args, code, "", err)


def with_stderr_gone(*args: str, cwd: Path, closed: bool) -> subprocess.CompletedProcess[str]:
    """Runs `agentform ARGS` with stderr's reader already gone (a pipe), or with no
    stderr at all (`2>&-`: the descriptor closed before the interpreter starts)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentform", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=None if closed else subprocess.PIPE,
        text=True,
        preexec_fn=(lambda: os.close(2)) if closed else None,
    )
    assert proc.stdout is not None
    if proc.stderr is not None:
        proc.stderr.close()  # before the child has written anything
    out = proc.stdout.read()
    proc.stdout.close()
    code = proc.wait(timeout=120)
    return subprocess.CompletedProcess(proc.args, code, out, "")


def in_process(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output


@pytest.mark.slow
def test_apply_with_stdout_closed_completes_every_change(quickstart: Path) -> None:
    done = with_stdout_closed("apply", "--auto-approve", cwd=quickstart)
    assert done.stderr == ""  # no traceback, no crash log, no shutdown noise
    assert done.returncode == 0  # the apply's outcome
    assert not list((quickstart / ".agentform").glob("crash-*.log"))
    code, output = in_process("plan", "--detailed-exitcode", "-C", str(quickstart))
    assert code == 0 and "No changes." in output  # every change was made


@pytest.mark.slow
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


@pytest.mark.parametrize("closed", [False, True], ids=["reader-gone", "closed"])
def test_apply_with_stderr_gone_completes_every_change(quickstart: Path, closed: bool) -> None:
    """The JSON report goes to stdout, the progress lines to stderr: they are dropped."""
    done = with_stderr_gone(
        "apply", "--auto-approve", "--format", "json", cwd=quickstart, closed=closed
    )
    assert done.returncode == 0, done.stdout
    assert json.loads(done.stdout)["failed"] == 0
    assert not list((quickstart / ".agentform").glob("crash-*.log"))
    code, output = in_process("plan", "--detailed-exitcode", "-C", str(quickstart))
    assert code == 0 and "No changes." in output


@pytest.mark.parametrize("closed", [False, True], ids=["reader-gone", "closed"])
def test_validate_with_stderr_gone_exits_with_its_own_code(quickstart: Path, closed: bool) -> None:
    """A warning (stderr's only output) that cannot be written does not fail the run;
    errors that cannot be written still do."""
    hooks = quickstart / "webhooks.yaml"
    hooks.write_text(
        hooks.read_text().replace("EXECUTION_FAILED]", "EXECUTION_FAILED, BATCH_STARTED]")
    )
    assert "warning:" in in_process("validate", "-C", str(quickstart))[1]
    assert with_stderr_gone("validate", cwd=quickstart, closed=closed).returncode == 0
    (quickstart / "extra.yaml").write_text("profilePools:\n  - {name: x, colour: red}\n")
    assert with_stderr_gone("validate", cwd=quickstart, closed=closed).returncode == 1


def test_apply_with_no_stdout_at_all_completes_every_change(quickstart: Path) -> None:
    """`agentform apply --auto-approve >&-`: the descriptor is closed before the
    interpreter starts (sys.stdout is None), which crashed as a bug in agentform."""
    proc = subprocess.run(
        f'"{sys.executable}" -m agentform apply --auto-approve >&-',
        shell=True,
        cwd=quickstart,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
    )
    assert "a bug in agentform" not in proc.stderr and proc.returncode == 0, proc.stderr
    again = CliRunner().invoke(cli, ["plan", "--detailed-exitcode", "-C", str(quickstart)])
    assert again.exit_code == 0, again.output
