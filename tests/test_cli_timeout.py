"""--timeout and AGENTFORM_TIMEOUT (issue 20): a service that takes connections and
never answers is a clear error after the seconds given, and the run says on
stderr, once, that it is retrying (-v: each retry), never silence."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agentform.api import client as client_module
from agentform.api.retries import RetryPolicy
from agentform.cli.main import cli


@pytest.fixture
def silent() -> Iterator[str]:
    """A loopback endpoint whose connections the kernel takes and no one answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/agents/v2"


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """The retries' own waits made short: what is timed here is the socket's."""
    monkeypatch.setattr(
        client_module, "RetryPolicy", lambda: RetryPolicy(attempts=3, base_delay=0.001)
    )


def plan(ws: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    ws.mkdir(exist_ok=True)
    (ws / "agentform.yaml").write_text("workspace: w\n")
    return CliRunner().invoke(
        cli, ["plan", "-C", str(ws), *args], env={"AGENTFORM_API_KEY": "k", **(env or {})}
    )


def test_a_silent_service_times_out_after_the_seconds_given(silent: str, tmp_path: Path) -> None:
    result = plan(tmp_path / "ws", "--endpoint", silent, "--timeout", "0.1")
    assert result.exit_code == 1
    assert "GET /context: cannot reach the service" in result.stderr
    assert "timeout: no answer within 0.1 s (--timeout or AGENTFORM_TIMEOUT)" in result.stderr
    retrying = [line for line in result.stderr.splitlines() if line.startswith("retrying")]
    assert retrying == [
        "retrying failed requests (GET /context: timeout: no answer "
        "within 0.1 s (--timeout or AGENTFORM_TIMEOUT)); -v shows each retry"
    ]
    assert "Traceback" not in result.output


def test_verbose_shows_each_retry(silent: str, tmp_path: Path) -> None:
    result = plan(tmp_path / "ws", "--endpoint", silent, "-v", env={"AGENTFORM_TIMEOUT": "0.1"})
    assert result.exit_code == 1
    retrying = [line for line in result.stderr.splitlines() if line.startswith("retrying")]
    # every request read at once is retried twice (3 attempts), each retry a line
    assert sum(line.startswith("retrying GET /context in ") for line in retrying) == 2
    assert all(
        line.endswith(": timeout: no answer within 0.1 s (--timeout or AGENTFORM_TIMEOUT)")
        for line in retrying
    )


@pytest.mark.parametrize("value", ["0", "-1", "soon", "0s", "5 parsecs"])
def test_a_timeout_that_is_not_seconds_is_refused(value: str, tmp_path: Path) -> None:
    given = plan(tmp_path / "ws", "--endpoint", "http://127.0.0.1:9/agents/v2", "--timeout", value)
    assert given.exit_code == 1 and "--timeout" in given.output
    from_env = plan(
        tmp_path / "ws",
        "--endpoint",
        "http://127.0.0.1:9/agents/v2",
        env={"AGENTFORM_TIMEOUT": value},
    )
    assert from_env.exit_code == 1 and "Invalid value for AGENTFORM_TIMEOUT" in from_env.output


@pytest.mark.parametrize("given", ["0.1s", "0.1"])
def test_a_timeout_may_be_a_duration_as_docs_and_other_options_write_it(
    given: str, silent: str, tmp_path: Path
) -> None:
    """`--timeout 1s` said "'1s' is not a valid float range" (DESIGN's `--timeout
    DURATION`; --since, --retain and service advance take units)."""
    for args, env in (((("--timeout", given)), {}), ((), {"AGENTFORM_TIMEOUT": given})):
        result = plan(tmp_path / "ws", "--endpoint", silent, *args, env=env)
        assert result.exit_code == 1, result.output
        assert "within 0.1 s" in result.stderr, result.output


@pytest.mark.parametrize(
    "args",
    [["service", "advance", "1m"], ["webhook", "explain", "11111111-1111-4111-8111-111111111111"]],
)
def test_agentforms_own_operations_take_the_timeout_too(
    silent: str, tmp_path: Path, args: list[str]
) -> None:
    """Their client was built apart from the run's and ignored --timeout (30 s each)."""
    result = CliRunner().invoke(
        cli,
        [*args, "--endpoint", silent, "--timeout", "0.1"],
        env={"AGENTFORM_API_KEY": "k"},
    )
    assert result.exit_code == 1
    assert "no answer within 0.1 s" in result.output, result.output
