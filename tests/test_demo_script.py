"""`make demo`'s script, run as a user runs it with its output sent to a file: all five
kinds applied, no warning, a plan that says "No changes", then the workspace's
tests, all passing."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agentform.service import DEMO_ADMIN_KEY, create_app
from tests.service.console.support import Console

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_demo_ends_with_no_changes_and_writes_plain_text_to_a_file(tmp_path: Path) -> None:
    demo = tmp_path / "quickstart"
    shutil.copytree(
        ROOT / "examples" / "quickstart", demo, ignore=shutil.ignore_patterns(".agentform")
    )
    log = tmp_path / "demo.log"
    with log.open("wb") as out:
        done = subprocess.run(
            ["bash", str(demo / "demo.sh")],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "AGENTFORM": str(Path(sys.executable).with_name("agentform"))},
            timeout=300,
        )
    text = log.read_text(encoding="utf-8")
    assert done.returncode == 0, text
    assert "\x1b" not in text  # no terminal escapes in a file
    lines = text.rstrip().splitlines()
    assert lines[lines.index("$ agentform test") - 2].startswith("No changes.")
    summary = [line for line in lines if line.endswith(" passed, 0 failed")]
    assert len(summary) == 1, text
    assert lines[-2:] == [
        "Look at it: `agentform service run` here, then open http://127.0.0.1:8700/console/",
        "and sign in with the demo key: demo-admin-key",
    ]
    assert_the_console_shows_the_failed_checkout(demo, text)
    assert "$ agentform apply --auto-approve" in text
    assert "warning" not in text.lower(), text
    for kind in ("profilePools", "profileGroups", "vaultTemplates", "webhooks", "batches"):
        assert f"create {kind}/" in text, kind  # the quickstart shows all five kinds
    assert "create webhookAttachments/" in text


def assert_the_console_shows_the_failed_checkout(demo: Path, text: str) -> None:
    """What a newcomer finds signing in with the demo key: the failed execution, why its
    alert was sent, and its delivery attempts (nothing listens where it goes)."""
    (execution,) = re.findall(r"the failed checkout: execution ([0-9a-f-]{36})", text)
    app = create_app(demo / ".agentform" / "service.db", runtime=False)
    try:
        console = Console(app).signed_in(DEMO_ADMIN_KEY)
        failed = console.get("/executions?status=failed").text
        assert execution in failed
        page = console.get(f"/executions/{execution}").text
        assert "ops-alerts: EXECUTION_FAILED sent, failed after 3 attempts" in page
        delivery = re.search(r'href="/console/deliveries/([0-9a-f-]{36})">its delivery', page)
        assert delivery is not None
        attempts = console.get(f"/deliveries/{delivery.group(1)}").text
        assert attempts.count("could not deliver") == 3
    finally:
        app.state.db.close()


def test_the_quickstart_attaches_batch_events_where_they_can_arrive() -> None:
    """Batch events carry no execution metadata: under a metadataFilter they never come."""
    hooks = yaml.safe_load((ROOT / "examples/quickstart/webhooks.yaml").read_text())["webhooks"]
    attachments = [a for h in hooks for a in h.get("attachments", [])]
    batch_events = {"BATCH_STARTED", "BATCH_COMPLETED"}
    assert any(
        batch_events & set(a["eventRules"]) and not a.get("metadataFilter") for a in attachments
    )
