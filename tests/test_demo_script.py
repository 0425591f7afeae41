"""`make demo`'s script, run as a user runs it with its output sent to a file: all five
kinds applied, no warning, a plan that says "No changes", then the workspace's
tests, all passing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

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
    assert lines[-1].endswith(" passed, 0 failed"), text
    assert "$ agentform apply --auto-approve" in text
    assert "warning" not in text.lower(), text
    for kind in ("profilePools", "profileGroups", "vaultTemplates", "webhooks", "batches"):
        assert f"create {kind}/" in text, kind  # the quickstart shows all five kinds
    assert "create webhookAttachments/" in text


def test_the_quickstart_attaches_batch_events_where_they_can_arrive() -> None:
    """Batch events carry no execution metadata: under a metadataFilter they never come."""
    hooks = yaml.safe_load((ROOT / "examples/quickstart/webhooks.yaml").read_text())["webhooks"]
    attachments = [a for h in hooks for a in h.get("attachments", [])]
    batch_events = {"BATCH_STARTED", "BATCH_COMPLETED"}
    assert any(
        batch_events & set(a["eventRules"]) and not a.get("metadataFilter") for a in attachments
    )
