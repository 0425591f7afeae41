"""Safety defects of issue 10 found by running the CLI as a new user would:
answers that are not JSON (1), the crash log (1), the organization and endpoint
options (8), a busy port (8), and what validate accepts (8)."""

from __future__ import annotations

import os
import socket
import stat
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from starlette.responses import HTMLResponse
from starlette.types import Receive, Scope, Send

from agentform.api.retries import RetryPolicy
from agentform.cli.main import cli
from agentform.service import DEMO_ADMIN_KEY, create_app
from tests.loopback import serving

OTHER_ORG = "11111111-1111-4111-8111-111111111111"


@pytest.fixture
def ws(quickstart: Path) -> Path:
    return quickstart


def agentform(*args: str, env: dict[str, str | None] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), env=env)


async def login_page(scope: Scope, receive: Receive, send: Send) -> None:
    """What a proxy in front of the service answers: 200, an HTML login page."""
    await HTMLResponse("<html><body>Please sign in</body></html>")(scope, receive, send)


def test_an_html_page_is_a_clean_error_not_a_crash(ws: Path) -> None:
    with serving(login_page) as origin:
        result = agentform(
            "plan",
            "-C",
            str(ws),
            "--endpoint",
            f"{origin}/agents/v2",
            env={"AGENTFORM_API_KEY": DEMO_ADMIN_KEY},
        )
    assert result.exit_code == 1, result.output
    assert f"expected JSON from GET {origin}/agents/v2/context, got text/html" in result.output
    assert "Traceback" not in result.output and "Unexpected error" not in result.output


def test_a_crash_log_is_a_new_file_of_the_run_only_its_user_reads(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentform.cli.context import RunContext

    def bug(*_: object, **__: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(RunContext, "load_environment", bug)
    shared = Path(os.environ.get("TMPDIR", "/tmp")) / "agentform-crash.log"
    before = shared.stat().st_mtime if shared.exists() else None
    first = agentform("validate", "-C", str(ws))
    second = agentform("validate", "-C", str(ws))
    assert first.exit_code == second.exit_code == 1
    logs = sorted((ws / ".agentform").glob("crash-*.log"))
    assert len(logs) == 2, logs  # one file per run, never reused
    for log in logs:
        assert str(log) in first.output + second.output
        assert stat.S_IMODE(log.stat().st_mode) == 0o600
        assert "RuntimeError: a bug" in log.read_text()
    assert (shared.stat().st_mtime if shared.exists() else None) == before


def test_organization_id_must_be_a_uuid(ws: Path) -> None:
    result = agentform("plan", "-C", str(ws), "--organization-id", "acme")
    assert result.exit_code != 0
    assert "'acme' is not a valid UUID" in result.output


def test_an_organization_mismatch_names_where_the_id_came_from(ws: Path) -> None:
    result = agentform("plan", "-C", str(ws), "--organization-id", OTHER_ORG)
    assert result.exit_code == 1
    assert f"not {OTHER_ORG} (--organization-id)" in result.output
    assert "agentform.yaml" not in result.output
    root = ws / "agentform.yaml"
    root.write_text(root.read_text() + f"organizationId: {OTHER_ORG}\n")
    result = agentform("plan", "-C", str(ws))
    assert f"not {OTHER_ORG} (organizationId in agentform.yaml)" in result.output


@pytest.mark.parametrize("path", ["", "/agents/v1"], ids=["no base path", "another version"])
def test_an_endpoint_without_the_base_path_gets_a_hint(ws: Path, tmp_path: Path, path: str) -> None:
    """The hint gives the base path: appended where there is none, in place of another
    version's (never `/agents/v1/agents/v2`)."""
    with serving(create_app(tmp_path / "svc.db")) as origin:
        result = agentform(
            "plan",
            "-C",
            str(ws),
            "--endpoint",
            origin + path,
            env={"AGENTFORM_API_KEY": DEMO_ADMIN_KEY},
        )
    assert result.exit_code == 1
    assert "404" in result.output
    assert f"did you mean {origin}/agents/v2?" in result.output, result.output
    assert "v1/agents/v2" not in result.output


def test_service_run_on_a_busy_port_fails_before_its_banner(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = agentform("service", "run", "--port", str(port), "--db", str(tmp_path / "s.db"))
    assert result.exit_code == 1
    assert "Agent Service on" not in result.output and "admin API key" not in result.output
    assert f"127.0.0.1:{port} is in use" in result.output


@pytest.mark.parametrize("command", ["validate", "show"])
@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--record-cassette", "{tmp}/run.yaml"),
        ("--endpoint", "http://127.0.0.1:9/agents/v2"),
        ("--api-key-file", "{tmp}/no-such-file"),
        ("--organization-id", str(uuid.UUID(int=1))),
    ],
)
def test_offline_commands_refuse_the_options_they_would_not_use(
    ws: Path, flag: str, value: str, tmp_path: Path, command: str
) -> None:
    """validate reads the files, show a saved plan: neither calls the service."""
    args = [command]
    if command == "show":
        plan = tmp_path / "plan.json"
        assert agentform("plan", "-C", str(ws), "--out", str(plan)).exit_code == 0
        args.append(str(plan))
    result = agentform(*args, "-C", str(ws), flag, value.format(tmp=tmp_path))
    assert result.exit_code == 1, result.output
    assert f"{command} works offline: {flag} is not used" in result.output
    assert not (tmp_path / "run.yaml").exists()


def test_validate_still_runs_with_the_endpoint_from_the_environment(ws: Path) -> None:
    result = agentform("validate", "-C", str(ws), env={"AGENTFORM_ENDPOINT": "http://x/agents/v2"})
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("where", ["file", "environment"])
def test_an_api_key_a_header_cannot_carry_is_a_clean_error(
    ws: Path, tmp_path: Path, where: str
) -> None:
    """A key file holding something else (a pasted note, a non-ASCII password) is
    named as the problem, without its content, before any call."""
    key = "clé-secrète-ü"
    keyfile = tmp_path / "key"
    keyfile.write_text(key + "\n")
    given = ["--api-key-file", str(keyfile)] if where == "file" else []
    env = {"AGENTFORM_API_KEY": key if where == "environment" else None}
    result = agentform("plan", "-C", str(ws), *given, env=env)
    assert result.exit_code == 1
    assert "Unexpected error" not in result.output and key not in result.output
    source = "--api-key-file" if where == "file" else "AGENTFORM_API_KEY"
    assert f"the API key from {source} is not printable ASCII" in result.output
    assert not list((ws / ".agentform").glob("crash-*.log"))


def test_a_logged_error_holds_no_secret_value(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The in-process service logs a bug's traceback, whose message holds the value;
    the run's log handler scrubs it (logs are a last line of defence, as cassettes)."""
    from agentform.service.store import vault_templates

    value = 'log-canary-"ü\\7f3e'

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError(f"cannot store {args!r} {kwargs!r}")

    monkeypatch.setattr(vault_templates, "create_template", broken)
    monkeypatch.setattr(RetryPolicy, "backoff", lambda self, attempt: 0.0)  # retried, no waits
    (ws / "note.yaml").write_text(
        "vaultTemplates:\n  - name: Note\n    kind: custom\n"
        "    description: \"{{ secret('NOTE') }}\"\n"
        "    fields: [{type: text, label: Note, required: false}]\n"
    )
    result = agentform("apply", "--auto-approve", "-C", str(ws), env={"NOTE": value})
    assert result.exit_code == 1
    assert "unhandled error on POST /agents/v2/vault/templates" in result.stderr
    assert "RuntimeError: cannot store" in result.stderr  # the traceback was logged
    for form in (value, value.encode("unicode_escape").decode(), "log-canary"):
        assert form not in result.output, form


@pytest.mark.parametrize("source", ["file", "environment"])
def test_the_api_key_is_marked_sensitive_from_where_it_is_read(
    source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key is a Sensitive from --api-key-file or AGENTFORM_API_KEY on: the endpoint
    and client objects, their reprs and any message built from them never hold it."""
    from agentform.api.connect import Endpoint, resolve_api_key
    from agentform.cli.endpoint import open_client
    from agentform.core.sensitive import Sensitive

    key = 'cnryKey-"q\\z-7Xw'
    key_file = tmp_path / "key"
    key_file.write_text(key)
    monkeypatch.setenv("AGENTFORM_API_KEY", key)
    resolved = resolve_api_key(key_file if source == "file" else None)
    assert isinstance(resolved, Sensitive) and resolved.reveal() == key
    endpoint = Endpoint("http://127.0.0.1:9/agents/v2", resolved)
    assert key not in repr(endpoint) and key not in str(endpoint)
    client = open_client(endpoint, tmp_path)
    assert client.sender.headers["X-Api-Key"] == key  # revealed only for the wire
