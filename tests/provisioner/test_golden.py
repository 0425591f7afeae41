"""Golden plan cases, discovered from tests/cases/<kind>/<NNN-name>/:

- desired.yaml: the workspace's agentform.yaml (`workspace:` added when missing)
- live.json (optional): live objects to create first, in the workspace format
- plan.txt and plan.json: the expected plan (ids replaced by <kind/name> names)
- or error.txt: the expected diagnostics when planning must fail

Every case that plans also applies its plan and checks the next plan is empty.
Set UPDATE_GOLDEN=1 to rewrite the expected files (then read the diff!).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from agentform.errors import AgentformError
from agentform.kinds import Kind
from agentform.output.text import TextView

from .harness import Service

CASES = Path(__file__).parents[1] / "cases"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"


def discover() -> list[Path]:
    return sorted(p for p in CASES.glob("*/*") if (p / "desired.yaml").exists())


def _ids(service: Service) -> dict[str, str]:
    """Every live id -> a stable placeholder, for comparing plans across runs."""

    async def go(api) -> dict[str, str]:  # type: ignore[no-untyped-def]
        out = {}
        collections = [("/profiles", "profile")]
        collections += [(k.collection, k.name) for k in Kind.registry.values()]
        for path, kind in collections:
            for item in await api.list_all(path):
                out[item["id"]] = f"<{kind}/{item['name']}>"
        return out

    return service.run(go)


def golden_json(plan_json: str, ids: dict[str, str]) -> str:
    data = json.loads(plan_json)
    for key in ("inputsDigest", "fingerprints", "secretSalt", "secretDigests"):
        data.pop(key, None)
    text = json.dumps(data, indent=2, sort_keys=True)
    for live_id, name in ids.items():
        text = text.replace(live_id, name)
    return text + "\n"


def check(path: Path, actual: str) -> None:
    if UPDATE:
        path.write_text(actual)
    assert path.exists(), f"{path} is missing (run with UPDATE_GOLDEN=1 to create it)"
    assert actual == path.read_text(), f"{path} differs"


@pytest.mark.parametrize("case", discover(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_golden_case(case: Path, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    desired = (case / "desired.yaml").read_text()
    if not re.search(r"^workspace:", desired, re.M):
        desired = "workspace: golden\n" + desired
    (root / "agentform.yaml").write_text(desired)
    service = Service(tmp_path / "service.db")
    if (case / "live.json").exists():
        service.seed_live(json.loads((case / "live.json").read_text()))
    service.log.reset()
    if (case / "error.txt").exists():
        with pytest.raises(AgentformError) as info:
            service.plan(root)
        check(case / "error.txt", str(info.value) + "\n")
        assert service.log.writes() == [], "a failed plan must make no write"
        return
    plan = service.plan(root)
    assert service.log.writes() == [], "planning must never write"
    ids = _ids(service)
    check(case / "plan.txt", TextView().plan(plan))
    check(case / "plan.json", golden_json(plan.model_dump_json(), ids))
    report = service.apply(root, plan)
    assert report.ok, report.to_json()
    again = service.plan(root)
    assert not again.has_changes, TextView().plan(again)
