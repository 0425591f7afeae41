"""Export: a workspace built outside agentform, exported, plans to no changes."""

from __future__ import annotations

from pathlib import Path

import yaml

from agentform.config.loader import load_workspace
from agentform.engine.export import export_live
from tests.provisioner.harness import Service, write_workspace


def test_export_round_trip(service: Service, ws: Path) -> None:
    service.seed_live(
        {
            "profilePools": [
                {
                    "name": "eu",
                    "selectionStrategy": "most_recently_used",
                    "members": ["bot-2", "bot-1"],
                },
                {"name": "empty"},
            ],
            "profileGroups": [{"name": "g", "allowConcurrentUse": True, "members": ["bot-3"]}],
            "vaultTemplates": [
                {
                    "name": "Login",
                    "kind": "login",
                    "description": "d",
                    "fields": [
                        {"type": "username", "label": "User", "required": True, "hint": "h"},
                        {"type": "password", "label": "Pass", "required": False},
                    ],
                    "steps": [
                        {"key": "in", "title": "In", "fieldKeys": ["USER"]},
                        {"key": "note", "title": "Note", "instructions": "i", "fieldKeys": []},
                    ],
                },
                {
                    "name": "Bare",
                    "kind": "custom",
                    "fields": [{"type": "text", "label": "T", "required": True}],
                },
            ],
        }
    )
    write_workspace(ws, {"agentform.yaml": "workspace: exported\n"})
    documents = service.run(lambda api: export_live(load_workspace(ws), api))
    assert [p["name"] for p in documents["profilePools"]] == ["empty", "eu"]
    assert documents["profilePools"][1]["members"] == ["bot-1", "bot-2"]
    assert {t["name"] for t in documents["vaultTemplates"]} == {"Login", "Bare"}  # no presets
    for kind, items in documents.items():
        (ws / f"{kind}.yaml").write_text(yaml.safe_dump({kind: items}))
    plan = service.plan(ws)
    assert not plan.has_changes, plan.changes
    assert plan.summary.unchanged == 5
