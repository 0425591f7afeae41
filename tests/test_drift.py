"""`agentform drift`: a read-only plan as a report; exit 0 in sync, 2 drifted, 1 error.
Each drifted object is named with its fields and classified."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agentform.api.connect import Endpoint
from agentform.cli.endpoint import open_client
from agentform.cli.main import cli
from agentform.core.sensitive import Sensitive
from agentform.service import DEMO_ADMIN_KEY
from tests.markdown_check import structure

QUICKSTART = Path(__file__).parents[1] / "examples" / "quickstart"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def drifted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The quickstart, applied, then changed behind agentform's back in three ways."""
    ws = tmp_path_factory.mktemp("drift") / "quickstart"
    shutil.copytree(QUICKSTART, ws, ignore=shutil.ignore_patterns(".agentform"))
    assert run("apply", "--auto-approve", "-C", str(ws)).exit_code == 0
    assert run("drift", "-C", str(ws)).exit_code == 0

    async def change_the_service() -> None:
        async with open_client(Endpoint("local", Sensitive(DEMO_ADMIN_KEY)), ws) as api:
            pools = {p["name"]: p for p in await api.list_all("/agent-profile-pools")}
            await api.request(
                "PATCH",
                f"/agent-profile-pools/{pools['checkout-eu']['id']}",
                json={"allowConcurrentUse": True},
            )
            templates = await api.list_all("/vault/templates", {"searchName": "Shop login"})
            await api.request("DELETE", f"/vault/templates/{templates[0]['id']}")
            await api.request("POST", "/profile-groups", json={"name": "made-by-hand"})
            await api.request("POST", "/agent-profile-pools", json={"name": "not-pruned"})

    asyncio.run(change_the_service())
    return ws


def test_in_sync_exits_0(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(QUICKSTART, ws, ignore=shutil.ignore_patterns(".agentform"))
    run("apply", "--auto-approve", "-C", str(ws))
    result = run("drift", "-C", str(ws))
    assert result.exit_code == 0 and "No drift." in result.stdout
    doc = json.loads(run("drift", "--format", "json", "-C", str(ws)).stdout)
    assert doc["drifted"] is False and doc["items"] == []


def test_drift_json_names_and_classifies_each_object(drifted: Path) -> None:
    result = run("drift", "--format", "json", "-C", str(drifted))
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert doc["formatVersion"] == 1 and doc["workspace"] == "quickstart" and doc["drifted"]
    by_id = {i["id"]: i for i in doc["items"]}
    assert set(by_id) == {
        "profilePools/checkout-eu",
        "vaultTemplates/Shop login",
        "profileGroups/made-by-hand",
    }  # not-pruned: profilePools are not pruned, so an undeclared pool is not drift
    changed = by_id["profilePools/checkout-eu"]
    assert changed["drift"] == "changed"
    assert changed["fields"] == [{"field": "allowConcurrentUse", "service": True, "files": False}]
    assert changed["description"] == "changed in the service"
    assert doc["counts"] == {"changed": 1, "missing": 1, "undeclared": 1, "declaredAbsent": 0}
    assert by_id["vaultTemplates/Shop login"]["drift"] == "missing"
    assert by_id["vaultTemplates/Shop login"]["object"]["kind"] == "login"
    assert by_id["profileGroups/made-by-hand"]["drift"] == "undeclared"


def test_drift_text_and_markdown(drifted: Path) -> None:
    text = run("drift", "-C", str(drifted))
    assert text.exit_code == 2
    assert "~ profilePools/checkout-eu  changed in the service" in text.stdout
    assert "allowConcurrentUse: true -> false" in text.stdout
    assert "+ vaultTemplates/Shop login  missing in the service" in text.stdout
    assert "- profileGroups/made-by-hand  present in the service but not declared" in text.stdout
    markdown = run("drift", "--format", "markdown", "-C", str(drifted))
    assert markdown.exit_code == 2
    doc = structure(markdown.stdout)
    assert doc.marker == "<!-- agentform:drift workspace=quickstart -->"
    assert [s.summary for s in doc.sections] == [
        "profilePools: 1 drifted",
        "vaultTemplates: 1 drifted",
        "profileGroups: 1 drifted",
    ]  # in plan order: what apply would create and update first, deletes last
    pools = doc.sections[0].code.splitlines()
    assert pools[0].startswith("~ profilePools/checkout-eu: changed in the service")
    assert pools[1:] == ["-    allowConcurrentUse: true", "+    allowConcurrentUse: false"]
    header, *rows = doc.tables[0]
    assert header == [
        "kind",
        "changed in the service",
        "missing in the service",
        "present in the service but not declared",
        "present in the service but declared absent",
    ]
    assert rows[0] == ["`profilePools`", "1", "0", "0", "0"]


def test_drift_never_writes(drifted: Path) -> None:
    first = run("drift", "--format", "json", "-C", str(drifted)).stdout
    assert run("drift", "--format", "json", "-C", str(drifted)).stdout == first


def test_drift_error_exits_1_and_says_why_in_markdown(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "agentform.yaml").write_text("workspace: broken\nprofilePools: [{name: x, membrs: []}]\n")
    result = run("drift", "--format", "markdown", "-C", str(ws))
    assert result.exit_code == 1
    doc = structure(result.stdout)
    assert doc.marker == "<!-- agentform:drift workspace=broken -->"
    assert any("profilePools.0.membrs: unknown key" in a for a in doc.alerts)
