"""Recorded conversations: the quickstart's plan and apply replayed with no service
running, and no cassette holding a credential or a secret() value."""

from __future__ import annotations

import asyncio
import shutil
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest
from click.testing import CliRunner

from agentform.api.client import ApiClient
from agentform.cli.cassette import cassette_vcr
from agentform.cli.endpoint import LOCAL_BASE_URL
from agentform.cli.main import cli
from agentform.config.loader import load_workspace
from agentform.core.secrets import Secrets
from agentform.engine.apply import ApplyReport, apply_plan
from agentform.engine.planner import make_plan
from agentform.service import DEMO_ADMIN_KEY

T = TypeVar("T")
CASSETTES = Path(__file__).parent / "cassettes"
QUICKSTART = Path(__file__).parents[1] / "examples" / "quickstart"


def replay(name: str, fn: Callable[[ApiClient], Awaitable[T]], secrets: Secrets | None = None) -> T:
    """Runs fn(api) with every HTTP exchange served from the cassette, nothing else
    (requests scrubbed of `secrets` as they were when recorded, to match)."""
    player = cassette_vcr(secrets or Secrets(), None, record_mode="none")
    player.match_on = ("method", "scheme", "host", "port", "path", "query", "body")

    async def go() -> T:
        # a plain HTTP client to a host that does not exist: only the cassette can answer
        async with ApiClient(LOCAL_BASE_URL, "not-a-real-key") as api:
            return await fn(api)

    with player.use_cassette(str(CASSETTES / f"{name}.yaml")) as cassette:
        result = asyncio.run(go())
        assert cassette.all_played, "every recorded exchange is used"
    return result


def test_replay_quickstart_plan() -> None:
    workspace = load_workspace(QUICKSTART)
    plan = replay("quickstart-plan", lambda api: make_plan(workspace, api, "local"))
    assert sorted((c.action, c.id) for c in plan.changes) == [
        ("create", "batches/checkout-agent/nightly-reconcile"),
        ("create", "profileGroups/eu-profiles"),
        ("create", "profilePools/checkout-eu"),
        ("create", "profilePools/prod-eu"),
        ("create", "vaultTemplates/Shop login"),
        ("create", "webhookAttachments/checkout-agent/batch-events"),
        ("create", "webhookAttachments/checkout-agent/ops-alerts"),
        ("create", "webhookAttachments/support-agent/ops-alerts"),
        ("create", "webhooks/batch-events"),
        ("create", "webhooks/ops-alerts"),
    ]


def test_replay_quickstart_apply() -> None:
    workspace = load_workspace(QUICKSTART)

    async def plan_and_apply(api: ApiClient) -> ApplyReport:
        the_plan = await make_plan(workspace, api, "local")
        return await apply_plan(the_plan, api, 1, values=workspace.sensitive_values())

    report = replay("quickstart-apply", plan_and_apply, workspace.secrets)
    assert report.ok and report.count("succeeded") == 10


KNOWN_KEYS = [DEMO_ADMIN_KEY, "demo-read-key"]


@pytest.mark.parametrize("path", sorted(CASSETTES.glob("*.yaml")), ids=lambda p: p.name)
def test_no_cassette_holds_a_credential(path: Path) -> None:
    text = path.read_text()
    for key in KNOWN_KEYS:
        assert key not in text
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip().lower().rstrip(":") in (
            "x-api-key",
            "x-service-agents-api-key",
            "authorization",
        ):
            assert lines[i + 1].strip() == "- REDACTED"


def test_recording_scrubs_keys_and_secret_values(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(QUICKSTART, ws, ignore=shutil.ignore_patterns(".agentform"))
    (ws / "more.yaml").write_text(
        "vaultTemplates:\n  - name: Secret note\n    kind: custom\n"
        "    description: \"token {{ secret('NOTE_TOKEN') }}\"\n"
        "    fields: [{type: text, label: Note, required: false}]\n"
    )
    cassette = tmp_path / "run.yaml"
    key_file = tmp_path / "key"
    key_file.write_text(DEMO_ADMIN_KEY)
    result = CliRunner().invoke(
        cli,
        [
            "apply",
            "--auto-approve",
            "-C",
            str(ws),
            "--api-key-file",
            str(key_file),
            "--record-cassette",
            str(cassette),
        ],
        env={"NOTE_TOKEN": "tok-9f8e7d6c5b4a"},
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "tok-9f8e7d6c5b4a" not in result.output
    text = cassette.read_text()
    assert "tok-9f8e7d6c5b4a" not in text and DEMO_ADMIN_KEY not in text
    # the whole text of the field holding the secret is scrubbed, in the request and the answer
    assert text.count('"description":"REDACTED"') >= 2


def applied_and_recorded(tmp_path: Path, template: str, env: dict[str, str]) -> tuple[Path, str]:
    """A local workspace with one vault template (its YAML lines), applied with a
    cassette; the workspace and the cassette's text."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "agentform.yaml").write_text("workspace: w\nendpoint: local\n")
    (ws / "v.yaml").write_text("vaultTemplates:\n  - name: T\n    kind: custom\n" + template)
    cassette = tmp_path / "run.yaml"
    args = ["apply", "--auto-approve", "-C", str(ws), "--record-cassette", str(cassette)]
    result = CliRunner().invoke(cli, args, env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return ws, cassette.read_text()


def test_a_short_secret_is_scrubbed_as_the_whole_field_that_holds_it(tmp_path: Path) -> None:
    """A value too short to search for alone (it would mask unrelated text) is still
    never recorded: the whole text of a field holding it is sensitive, and is what is
    scrubbed. Where the short value fills a field alone, the run warns."""
    env = {"PIN": "7q9", "CODE": "zx"}
    ws, text = applied_and_recorded(
        tmp_path,
        "    description: \"pin {{ secret('PIN') }} for the door\"\n"
        "    fields: [{type: text, label: A, required: true, hint: \"{{ secret('CODE') }}\"}]\n",
        env,
    )
    assert "7q9" not in text and "REDACTED" in text
    said = CliRunner().invoke(cli, ["validate", "-C", str(ws)], env=env).output
    assert "v.yaml:5:" in said and "warning: secret CODE is shorter than 8 characters" in said
    assert "PIN" not in said  # it is never alone in a field


def test_an_empty_secret_stops_the_run_before_anything_is_recorded(tmp_path: Path) -> None:
    """An empty value is not set (CI gives '' for a secret it withholds): the apply
    stops naming it, before a call, so no cassette is written."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "agentform.yaml").write_text("workspace: w\nendpoint: local\n")
    (ws / "v.yaml").write_text(
        "vaultTemplates:\n  - name: T\n    kind: custom\n"
        "    description: \"Bearer {{ secret('T') }}\"\n"
    )
    cassette = tmp_path / "run.yaml"
    args = ["apply", "--auto-approve", "-C", str(ws), "--record-cassette", str(cassette)]
    result = CliRunner().invoke(cli, args, env={"T": ""}, catch_exceptions=False)
    assert result.exit_code == 1
    assert "secret T: environment variable is empty" in result.output
    assert not cassette.exists()


def test_an_empty_value_makes_no_text_scrubbed() -> None:
    secrets = Secrets()
    secrets.add("T", "")
    assert secrets.scrub("Bearer note") == "Bearer note"  # plain text stays as it is


def test_record_cassette_without_vcrpy_names_the_extra_before_any_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """vcrpy is the optional extra agentform[cassettes]: without it, --record-cassette
    stops with one line saying what to install, before a client is opened."""
    import agentform.cli.endpoint

    def no_call(*args: object, **kwargs: object) -> None:
        raise AssertionError("a client was opened")

    monkeypatch.setitem(sys.modules, "vcr", None)  # `import vcr` raises ImportError
    monkeypatch.setattr(agentform.cli.endpoint, "open_client", no_call)
    cassette = tmp_path / "run.yaml"
    result = CliRunner().invoke(
        cli, ["plan", "-C", str(QUICKSTART), "--record-cassette", str(cassette)]
    )
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        "Error: --record-cassette needs vcrpy, which is not installed: "
        "pip install 'agentform[cassettes]'"
    ]
    assert not cassette.exists()
