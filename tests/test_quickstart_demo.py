"""`make demo` as a user runs it: the quickstart's demo script, on a copy, ends with
"No changes", says no warning, and the quickstart shows all five kinds (a webhook
with attachments, a batch)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml


def test_the_demo_applies_all_five_kinds_and_ends_with_no_changes(quickstart: Path) -> None:
    agentform = Path(sys.executable).with_name("agentform")
    env = {**os.environ, "AGENTFORM": str(agentform), "NO_COLOR": "1"}
    env.pop("AGENTFORM_API_KEY", None)
    env.pop("AGENTFORM_ENDPOINT", None)
    done = subprocess.run(
        ["bash", str(quickstart / "demo.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout + done.stderr
    assert "warning" not in out.lower(), out
    last = [line for line in done.stdout.splitlines() if line.strip()][-1]
    assert last.startswith("No changes."), out
    for kind in ("profilePools", "profileGroups", "vaultTemplates", "webhooks", "batches"):
        assert f"create {kind}/" in out, kind
    assert "create webhookAttachments/" in out


def test_the_quickstart_attaches_batch_events_where_they_can_arrive(quickstart: Path) -> None:
    hooks = yaml.safe_load((quickstart / "webhooks.yaml").read_text())["webhooks"]
    rules = {
        (h["name"], a["agent"]): (set(a["eventRules"]), a.get("metadataFilter"))
        for h in hooks
        for a in h.get("attachments", [])
    }
    batch_events = {"BATCH_STARTED", "BATCH_COMPLETED"}
    assert any(events & batch_events and not filt for events, filt in rules.values()), rules
