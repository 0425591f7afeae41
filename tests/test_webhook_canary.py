"""A canary in a webhook header value (through secret() and written plainly) is found
nowhere: plan in every format, the plan file, apply output, export, cassettes,
error messages and the crash log."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from agentform.cli.main import cli

SECRET = "canary-secret-9d7c1b"
PLAIN = "canary-plain-4e2a6f"
ENV = {"HOOK_TOKEN": SECRET}

ROOT = "workspace: canary\nendpoint: local\n"
HOOKS = f"""\
webhooks:
  - name: ops
    url: https://hooks.example.com/x
    headers:
      Authorization: "Bearer {{{{ secret('HOOK_TOKEN') }}}}"
      X-Plain: {PLAIN}
    attachments:
      - {{agent: checkout-agent, eventRules: [EXECUTION_FAILED]}}
"""


def run(*args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(cli, list(args), env=env or ENV, catch_exceptions=False)
    return result


def clean(*texts: str) -> None:
    for text in texts:
        assert SECRET not in text and PLAIN not in text, text


def test_a_header_canary_is_found_nowhere(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "agentform.yaml").write_text(ROOT)
    (ws / "hooks.yaml").write_text(HOOKS)
    at = ["-C", str(ws)]
    outputs = [run("validate", *at).output]
    for fmt in ("text", "json"):
        outputs.append(run("plan", "--format", fmt, "-v", *at).output)
    plan_file = tmp_path / "plan.json"
    cassettes = [tmp_path / "plan-cassette.yaml", tmp_path / "apply-cassette.yaml"]
    outputs.append(
        run("plan", "--out", str(plan_file), "--record-cassette", str(cassettes[0]), *at).output
    )
    applied = run("apply", str(plan_file), "--record-cassette", str(cassettes[1]), *at)
    assert applied.exit_code == 0, applied.output
    outputs.append(applied.output)
    outputs.append(run("apply", "--auto-approve", "--format", "json", *at).output)
    exported = tmp_path / "exported"
    outputs.append(run("export", *at).output)
    outputs.append(run("export", "--out", str(exported), *at).output)
    # a change of the secret: the plan says only that it changed
    changed = run("plan", "-v", *at, env={"HOOK_TOKEN": "another-" + SECRET[::-1]})
    assert "headers.Authorization: (sensitive, changed)" in changed.output
    outputs.append(changed.output)
    clean(
        *outputs,
        plan_file.read_text(),
        *(c.read_text() for c in cassettes),
        *(p.read_text() for p in exported.glob("*.yaml")),
    )


def test_error_messages_and_the_crash_log_hold_no_header_value(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "agentform.yaml").write_text(ROOT)
    bad = HOOKS.replace(f"X-Plain: {PLAIN}", f'X-Plain: " {PLAIN} "').replace(
        "url: https://hooks.example.com/x", "url: not a url"
    )
    (ws / "hooks.yaml").write_text(bad)
    result = run("plan", "-C", str(ws))
    assert result.exit_code == 1
    assert "X-Plain" in result.output and "url" in result.output  # the problems are named
    assert "Unexpected error" not in result.output  # problems, not a crash: no crash log
    clean(result.output, *(log.read_text() for log in ws.glob(".agentform/crash-*.log")))
