"""The webhooks and batches kinds' canary case: a canary in a webhook header value
(through secret() and written plainly), in a workspace that also holds an attachment
and a batch, is found nowhere: plan in every format (and -v), the plan file, show,
apply output in every format, drift, export, `webhook test`, cassettes, error
messages, the crash log and every other file agentform writes. The leak finder is
the canary matrix's (tests/test_canaries.py): every encoding a value can take.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from agentform.cli.main import cli
from tests.test_canaries import Canary, leaks

SECRET = Canary("header-secret", "cnryHook-9d7c1b", "cnryHookOld-2b8e4f")
PLAIN = Canary("header-plain", "cnryPlain-4e2a6f", "cnryPlainOld-7c3d1a")
ENV = {"HOOK_TOKEN": SECRET.current, "AGENTFORM_API_KEY": None}

ROOT = "workspace: canary\nendpoint: local\n"
HOOKS = f"""\
webhooks:
  - name: ops
    url: https://hooks.invalid/x
    headers:
      Authorization: "Bearer {{{{ secret('HOOK_TOKEN') }}}}"
      X-Plain: {PLAIN.current}
    attachments:
      - {{agent: checkout-agent, eventRules: [EXECUTION_FAILED], metadataFilter: {{team: a}}}}
batches:
  - name: nightly
    agent: checkout-agent
    startAt: 2030-01-01T00:00:00Z
    config: {{type: timeBatching, batchSize: 1, batchInterval: 60}}
    items: [{{inputs: {{order: A-1}}}}, {{inputs: {{order: A-2}}}}]
"""


class Runs:
    """agentform runs on one workspace, and all they printed."""

    def __init__(self, ws: Path) -> None:
        self.ws = ws
        self.printed: list[tuple[str, str]] = []

    def __call__(self, *args: str, code: int | None = 0, env: dict | None = None) -> str:  # type: ignore[type-arg]
        result = CliRunner().invoke(cli, [*args, "-C", str(self.ws)], env=env or ENV)
        self.printed += [(f"stdout of {args}", result.stdout), (f"stderr of {args}", result.stderr)]
        if code is not None:
            assert result.exit_code == code, (args, result.output)
        return result.output


def found(where: list[tuple[str, bytes]]) -> dict[str, list[str]]:
    return {name: hits for name, blob in where for c in (SECRET, PLAIN) if (hits := leaks(blob, c))}


def written(root: Path) -> list[tuple[str, bytes]]:
    """Every file under `root` but the workspace's own files (they hold the values on
    purpose) and the local service's database (the service's state: it keeps the
    values it must send)."""
    inputs = {root / "agentform.yaml", root / "hooks.yaml"}
    return [
        (str(p.relative_to(root)), p.read_bytes())
        for p in sorted(root.rglob("*"))
        if p.is_file() and p not in inputs and not p.name.startswith("service.db")
    ]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "agentform.yaml").write_text(ROOT)
    (root / "hooks.yaml").write_text(HOOKS)
    return root


def test_a_header_canary_is_found_nowhere(ws: Path, tmp_path: Path) -> None:
    run = Runs(ws)
    out = tmp_path / "out"
    out.mkdir()
    run("validate")
    for fmt in ("text", "json", "markdown"):
        run("plan", "--format", fmt, "-v")
    plan_file = str(out / "plan.json")
    run("plan", "--out", plan_file, "--record-cassette", str(out / "plan-cassette.yaml"))
    for fmt in ("text", "json", "markdown"):
        run("show", plan_file, "--format", fmt)
    run("apply", plan_file, "--record-cassette", str(out / "apply-cassette.yaml"))
    # The secret and the plain value change (a rotation): every view of that change.
    rotated = HOOKS.replace(PLAIN.current, PLAIN.earlier)
    (ws / "hooks.yaml").write_text(rotated)
    env = {**ENV, "HOOK_TOKEN": SECRET.earlier}
    changed = run("plan", "-v", env=env, code=None)
    assert "headers.Authorization: (sensitive, changed)" in changed
    assert "headers.X-Plain: (sensitive, changed)" in changed
    for fmt in ("text", "markdown", "json"):
        run("drift", "--format", fmt, env=env, code=2)
    run("plan", "--format", "markdown", env=env)
    run("apply", "--auto-approve", "-v", env=env)
    (ws / "hooks.yaml").write_text(HOOKS)
    run("apply", "--auto-approve", "--format", "json")
    (ws / "hooks.yaml").write_text(rotated)
    run("apply", "--auto-approve", "--format", "markdown", env=env)
    run("export")
    run("export", "--out", str(out / "exported"))
    run("export", env={**env, "HOOK_TOKEN": None})  # the secret unset
    assert "EXECUTION_TEST to ops" in run("webhook", "test", "ops", code=None)
    everything = [(n, t.encode()) for n, t in run.printed]
    files = [*written(out), *written(ws)]
    assert {"plan.json", "plan-cassette.yaml", "apply-cassette.yaml"} <= {n for n, _ in files}
    assert any(n.startswith("exported/") for n, _ in files)
    assert found([("the files", HOOKS.encode() + str(env["HOOK_TOKEN"]).encode())])  # it can see
    assert not found([*everything, *files])


def test_error_messages_and_the_crash_log_hold_no_header_value(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = Runs(ws)
    bad = HOOKS.replace(f"X-Plain: {PLAIN.current}", f'X-Plain: " {PLAIN.current} "')
    (ws / "hooks.yaml").write_text(bad.replace("url: https://hooks.invalid/x", "url: not a url"))
    output = run("plan", code=1)
    assert "X-Plain" in output and "url" in output  # the problems are named
    # A bug whose message holds the values: a short notice, the values not in the log.
    (ws / "hooks.yaml").write_text(HOOKS)
    from agentform.output import text

    def broken(self: object, plan: object) -> str:
        raise RuntimeError(f"boom near {SECRET.current} and {PLAIN.current}")

    monkeypatch.setattr(text.TextView, "plan", broken)
    assert "Unexpected error" in run("plan", code=1)
    logs = list((ws / ".agentform").glob("crash-*.log"))
    assert len(logs) == 1 and "RuntimeError: boom near" in logs[0].read_text()
    everything = [(n, t.encode()) for n, t in run.printed]
    assert not found([*everything, *written(ws)])
