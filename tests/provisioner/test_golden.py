"""Golden plan cases, discovered from tests/cases/<kind>/<NNN-name>/:

- desired.yaml: the workspace's agentform.yaml (`workspace:` added when missing)
- live.json (optional): live objects to create first, in the workspace format
- plan.txt, plan.json and plan.md: the expected plan as text, JSON and markdown (ids
  replaced by <kind/name> names); the markdown is also parsed (markdown-it-py) and
  its structure checked against the plan
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

from agentform.engine.model import Plan
from agentform.errors import AgentformError
from agentform.kinds import Kind
from agentform.output.markdown import MarkdownView
from agentform.output.text import TextView

from ..markdown_check import structure
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
    markdown = MarkdownView().plan(plan)
    check(case / "plan.md", markdown)
    check_markdown_structure(plan, markdown)
    report = service.apply(root, plan)
    assert report.ok, [(r.change.id, r.error) for r in report.results]
    again = service.plan(root)
    assert not again.has_changes, TextView().plan(again)


def check_markdown_structure(plan: Plan, markdown: str) -> None:
    """What a reviewer sees: the marker, one section per kind holding a diff block with
    one headline per change, and a counts table that agrees with the plan."""
    doc = structure(markdown)
    assert doc.marker == "<!-- agentform:plan workspace=golden -->"
    assert doc.stray_code == 0
    kinds = list(dict.fromkeys(c.kind for c in plan.changes))
    assert [s.summary.split(":")[0] for s in doc.sections] == kinds
    for section in doc.sections:
        assert section.info == "diff"
        heads = [line for line in section.code.splitlines() if re.match(r"[-+~] \S", line)]
        mine = [c for c in plan.changes if c.kind == section.summary.split(":")[0]]
        assert [h.split(":")[0] for h in heads] == [
            {"create": "+", "update": "~", "delete": "-"}[c.action] + " " + c.id for c in mine
        ]
    if kinds:
        header, *rows = doc.tables[0]
        for row in rows:
            kind = row[0].strip("`")
            for action, count in zip(header[1:], row[1:], strict=True):
                expected = sum(c.kind == kind and c.action == action for c in plan.changes)
                assert int(count) == expected
    else:
        assert not doc.tables and "No changes." in "".join(doc.paragraphs)
