"""Webhooks against the in-process service: minimal calls, header values sent but
never shown, attachments after their integration, export that plans clean."""

from __future__ import annotations

import math
from pathlib import Path

from click.testing import CliRunner

from agentform.cli.main import cli
from agentform.config.loader import load_workspace
from agentform.engine.export import export_live
from agentform.output.text import TextView
from agentform.rules.webhook_integrations import header_digest
from tests.provisioner.harness import Service, write_workspace

ROOT = "workspace: hooks\n"
TOKEN = "canary-hook-3c1f0e"


def webhooks_yaml(n: int, attachments: bool = True) -> str:
    lines = ["webhooks:"]
    for i in range(n):
        lines.append(f"  - name: hook-{i:03d}")
        lines.append(f"    url: https://hooks.example.com/{i}")
        lines.append("    headers: {Authorization: \"Bearer {{ secret('TOKEN') }}\"}")
        if attachments:
            lines.append(
                "    attachments: [{agent: checkout-agent, eventRules: [EXECUTION_FAILED]}]"
            )
    return "\n".join(lines) + "\n"


def gets(service: Service, suffix: str) -> list[str]:
    return [p for m, p in service.log.calls if m == "GET" and p.endswith(suffix)]


def live(service: Service, path: str) -> list[dict]:  # type: ignore[type-arg]
    return service.run(lambda api: api.list_all(path))


def test_an_unchanged_workspace_reads_each_list_once_and_writes_nothing(
    service: Service, ws: Path
) -> None:
    n = 130
    env = {"TOKEN": TOKEN}
    write_workspace(ws, {"agentform.yaml": ROOT, "hooks.yaml": webhooks_yaml(n)})
    assert service.apply(ws, environ=env).ok
    service.log.reset()
    plan = service.plan(ws, environ=env)
    assert not plan.has_changes, TextView().plan(plan)
    assert service.log.writes() == []
    assert len(gets(service, "/webhook-integrations")) == math.ceil(n / 100)
    attachment_reads = gets(service, "/attachments")
    assert len(attachment_reads) == n == len(set(attachment_reads))  # one per integration
    assert len(gets(service, "/agents")) == 1


def test_attachments_not_listed_are_not_read(service: Service, ws: Path) -> None:
    env = {"TOKEN": TOKEN}
    write_workspace(ws, {"agentform.yaml": ROOT, "hooks.yaml": webhooks_yaml(3)})
    assert service.apply(ws, environ=env).ok
    (ws / "hooks.yaml").write_text(webhooks_yaml(3, attachments=False))
    service.log.reset()
    assert not service.plan(ws, environ=env).has_changes
    assert gets(service, "/attachments") == []


def test_a_changed_header_is_one_patch_of_the_whole_map(service: Service, ws: Path) -> None:
    files = "webhooks:\n  - name: h\n    url: https://x.example.com/\n    headers:\n"
    files += "      Authorization: \"Bearer {{ secret('TOKEN') }}\"\n      X-Team: pay\n"
    write_workspace(ws, {"agentform.yaml": ROOT, "hooks.yaml": files})
    assert service.apply(ws, environ={"TOKEN": "first"}).ok
    service.log.reset()
    report = service.apply(ws, environ={"TOKEN": TOKEN})
    assert report.ok
    (hook,) = live(service, "/webhook-integrations")
    assert service.log.writes() == [("PATCH", f"/webhook-integrations/{hook['id']}")]
    assert hook["headers"] == {
        "Authorization": {"digest": header_digest(hook["id"], "Authorization", f"Bearer {TOKEN}")},
        "X-Team": {"digest": header_digest(hook["id"], "X-Team", "pay")},
    }
    assert not service.plan(ws, environ={"TOKEN": TOKEN}).has_changes


def test_attachments_of_a_failed_integration_are_not_attempted(service: Service, ws: Path) -> None:
    write_workspace(ws, {"agentform.yaml": ROOT, "hooks.yaml": webhooks_yaml(1)})
    service.log.fail = lambda m, p: 500 if (m, p) == ("POST", "/webhook-integrations") else None
    report = service.apply(ws, environ={"TOKEN": TOKEN})
    assert {r.change.id: r.status for r in report.results} == {
        "webhooks/hook-000": "failed",
        "webhookAttachments/checkout-agent/hook-000": "not attempted",
    }
    assert not [c for c in service.log.calls if c[0] == "PUT"]
    service.log.fail = lambda m, p: None
    assert service.apply(ws, environ={"TOKEN": TOKEN}).ok  # a second apply converges
    assert not service.plan(ws, environ={"TOKEN": TOKEN}).has_changes


def test_a_lost_integration_create_is_adopted_and_its_attachments_follow(
    service: Service, ws: Path
) -> None:
    write_workspace(ws, {"agentform.yaml": ROOT, "hooks.yaml": webhooks_yaml(1)})
    lost: list[int] = []

    def lose_once(method: str, path: str) -> bool:
        if (method, path) == ("POST", "/webhook-integrations") and not lost:
            lost.append(1)
            return True
        return False

    service.log.lose_answer = lose_once
    assert service.apply(ws, environ={"TOKEN": TOKEN}).ok
    assert len(live(service, "/webhook-integrations")) == 1
    assert not service.plan(ws, environ={"TOKEN": TOKEN}).has_changes


def test_export_writes_placeholders_that_plan_clean_with_the_values_set(
    service: Service, ws: Path, tmp_path: Path
) -> None:
    env = {"TOKEN": TOKEN}
    write_workspace(ws, {"agentform.yaml": ROOT, "hooks.yaml": webhooks_yaml(2)})
    assert service.apply(ws, environ=env).ok
    # exported where no file declares the webhooks (a workspace that declares them
    # exports their headers as its files write them: test_sensitive.py)
    workspace = load_workspace(write_workspace(tmp_path / "bare", {"agentform.yaml": ROOT}))
    documents = service.run(lambda api: export_live(workspace, api))
    assert TOKEN not in repr(documents)
    (hook,) = [d for d in documents["webhooks"] if d["name"] == "hook-001"]
    assert hook == {
        "name": "hook-001",
        "url": "https://hooks.example.com/1",
        "headers": {"Authorization": '{{ secret("HOOK_001_AUTHORIZATION") }}'},
        "attachments": [{"agent": "checkout-agent", "eventRules": ["EXECUTION_FAILED"]}],
    }
    import yaml

    exported = write_workspace(
        tmp_path / "exported",
        {"agentform.yaml": ROOT, "webhooks.yaml": yaml.safe_dump(documents)},
    )
    values = {
        "HOOK_000_AUTHORIZATION": f"Bearer {TOKEN}",
        "HOOK_001_AUTHORIZATION": f"Bearer {TOKEN}",
    }
    plan = service.plan(exported, environ=values)
    assert not plan.has_changes, TextView().plan(plan)
    other = service.plan(exported, environ={**values, "HOOK_001_AUTHORIZATION": "wrong"})
    assert [c.id for c in other.changes] == ["webhooks/hook-001"]
    assert "headers.Authorization: (sensitive, changed)" in TextView().plan(other)


def test_batch_events_under_a_metadata_filter_are_a_warning(ws: Path) -> None:
    """Batch events carry no execution metadata: an attachment that names them and
    filters on metadata would never send them. Validate and plan say so."""
    files = "webhooks:\n  - name: h\n    url: https://x.example.com/\n    attachments:\n"
    files += "      - {agent: checkout-agent, eventRules: [EXECUTION_FAILED, BATCH_COMPLETED],"
    files += " metadataFilter: {team: payments}}\n"
    files += "      - {agent: support-agent, eventRules: ['*'], metadataFilter: {team: x}}\n"
    write_workspace(ws, {"agentform.yaml": ROOT, "hooks.yaml": files})
    (warning,) = load_workspace(ws).warnings
    assert str(warning.position) == "hooks.yaml:5:9"
    assert warning.summary == (
        "webhook h, agent checkout-agent: BATCH_COMPLETED is never sent under a "
        "metadataFilter (batch events carry no execution metadata); attach it through "
        "another webhook, without a metadataFilter"
    )
    result = CliRunner().invoke(cli, ["validate", "-C", str(ws)])
    assert result.exit_code == 0 and "hooks.yaml:5:9: warning: webhook h, agent" in result.output


def test_a_warning_about_an_attachment_carries_its_address(service: Service, ws: Path) -> None:
    files = "webhooks:\n  - name: h\n    url: https://x.example.com/\n    attachments:\n"
    files += "      - {agent: checkout-agent, eventRules: [BATCH_COMPLETED],"
    files += " metadataFilter: {team: payments}}\n"
    write_workspace(ws, {"agentform.yaml": ROOT, "hooks.yaml": files})
    plan = service.plan(ws)
    (warning,) = [w for w in plan.warnings if "metadataFilter" in w.message]
    assert warning.address == "webhookAttachments/checkout-agent/h"
    assert warning.address in {c.id for c in plan.changes}
    assert warning.position == "hooks.yaml:5:9"


def test_validate_refuses_webhook_mistakes_offline_all_at_once(ws: Path) -> None:
    """No service is reachable: event names (with a suggestion), the payload version,
    refused header names and the URL are checked in the files, every one reported."""
    files = "webhooks:\n  - name: h\n    url: hooks.example.com/x\n    payloadVersion: v1\n"
    files += "    headers: {X-Service-Signature: forged, Host: a, Transfer-Encoding: chunked}\n"
    files += "    attachments:\n"
    files += "      - {agent: checkout-agent, eventRules: [EXECUTION_FAILD, EXECUTION_TEST]}\n"
    root = "workspace: offline\nendpoint: http://127.0.0.1:9/agents/v2\n"
    write_workspace(ws, {"agentform.yaml": root, "hooks.yaml": files})
    result = CliRunner().invoke(cli, ["validate", "-C", str(ws)])
    assert result.exit_code == 1
    for expected in (
        "hooks.yaml:3:10: error: webhooks.0.url: must be an absolute http or https URL",
        "hooks.yaml:4:21: error: webhooks.0.payloadVersion: only the V2 payload format",
        "'X-Service-Signature' is set by the service and cannot be a custom header",
        "'Host' is set by the service",
        "hooks.yaml:5:53: error: webhooks.0.headers.Transfer-Encoding: 'Transfer-Encoding' is "
        "a hop-by-hop or framing header and cannot be a custom header",
        "unknown event 'EXECUTION_FAILD' (did you mean 'EXECUTION_FAILED'?)",
        "EXECUTION_TEST",
        "problems; nothing was changed",
    ):
        assert expected in result.output, (expected, result.output)
    assert "cannot reach" not in result.output and "forged" not in result.output
    assert "chunked" not in result.output


def test_export_offers_only_kinds_written_at_the_top_of_a_file(tmp_path: Path) -> None:
    """Attachments are written inside their webhook: `--kinds webhookAttachments` would
    export nothing, so it is not a choice (`--kinds webhooks` takes them along)."""
    result = CliRunner().invoke(cli, ["export", "--kinds", "webhookAttachments"])
    assert result.exit_code != 0
    assert "'webhookAttachments' is not one of" in result.output
    assert "'webhooks'" in result.output and "'batches'" in result.output


def test_a_plain_header_value_does_not_hide_or_change_an_equal_metadata_filter(
    tmp_path: Path,
) -> None:
    """A header value written plainly (`X-Team: payments`) is masked where it is a
    header value, not searched for in other text: the plan shows the metadataFilter
    `team: payments`, a saved plan applies it as written (not "(sensitive)"), and the
    export holds it, so a plan on the export is empty."""
    ws = write_workspace(
        tmp_path / "ws",
        {
            "agentform.yaml": "workspace: w\nendpoint: local\n",
            "hooks.yaml": "webhooks:\n  - name: h\n    url: https://hooks.example.com/x\n"
            "    headers: {X-Team: payments}\n    attachments:\n"
            "      - {agent: checkout-agent, eventRules: ['*'],"
            " metadataFilter: {team: payments}}\n",
        },
    )
    runner = CliRunner()
    at = ["-C", str(ws)]
    shown = runner.invoke(cli, ["plan", *at]).output
    assert '"team": "payments"' in shown and '"X-Team": "(sensitive)"' in shown
    saved = tmp_path / "plan.json"
    assert runner.invoke(cli, ["plan", "--out", str(saved), *at]).exit_code == 0
    assert runner.invoke(cli, ["apply", str(saved), *at]).exit_code == 0
    again = runner.invoke(cli, ["plan", "--detailed-exitcode", *at])
    assert again.exit_code == 0, again.output  # live holds what the files say
    exported = runner.invoke(cli, ["export", *at]).output
    assert "team: payments" in exported and "X-Team: '{{ secret(" in exported


def test_export_names_each_header_value_with_a_variable_of_its_own(
    service: Service, tmp_path: Path
) -> None:
    """`a-b` and `a_b` would both be A_B_AUTHORIZATION: two values, one variable,
    and the export could not plan clean. The second gets a suffix."""
    files = "webhooks:\n"
    for name in ("a-b", "a_b"):
        files += f"  - name: {name}\n    url: https://hooks.example.com/{name}\n"
        files += f"    headers: {{Authorization: 'Bearer {name}'}}\n"
    ws = write_workspace(tmp_path / "ws", {"agentform.yaml": ROOT, "hooks.yaml": files})
    assert service.apply(ws).ok
    bare = load_workspace(write_workspace(tmp_path / "bare", {"agentform.yaml": ROOT}))
    documents = service.run(lambda api: export_live(bare, api))
    headers = {d["name"]: d["headers"]["Authorization"] for d in documents["webhooks"]}
    assert headers == {
        "a-b": '{{ secret("A_B_AUTHORIZATION") }}',
        "a_b": '{{ secret("A_B_AUTHORIZATION_2") }}',
    }
    import yaml

    exported = write_workspace(
        tmp_path / "exported", {"agentform.yaml": ROOT, "w.yaml": yaml.safe_dump(documents)}
    )
    values = {"A_B_AUTHORIZATION": "Bearer a-b", "A_B_AUTHORIZATION_2": "Bearer a_b"}
    assert not service.plan(exported, environ=values).has_changes
