"""Golden plan cases, discovered from tests/cases/<kind>/<NNN-name>/:

- desired.yaml: the workspace's agentform.yaml (`workspace:` added when missing)
- files/ (optional): more files of the workspace (an itemsFile)
- env.json (optional): environment variables (secret() values)
- options.json (optional): plan options (allowPastStart, allowCancelRunning, now)
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
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agentform.api.client import ApiClient
from agentform.core.errors import AgentformError
from agentform.engine.model import Plan
from agentform.kinds import Kind
from agentform.kinds.context import PlanOptions
from agentform.output.markdown import SIGNS, MarkdownView
from agentform.output.text import TextView
from tests.markdown_check import structure
from tests.provisioner.harness import Service

CASES = Path(__file__).parents[1] / "cases"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
NOW = datetime(2026, 6, 1, tzinfo=UTC)  # "now" of every case unless options.json says


def discover() -> list[Path]:
    return sorted(p for p in CASES.glob("*/*") if (p / "desired.yaml").exists())


def _ids(service: Service) -> dict[str, str]:
    """Every live id -> a stable placeholder, for comparing plans across runs."""

    async def go(api: ApiClient) -> dict[str, str]:
        out: dict[str, str] = {}
        collections = [("/profiles", "profile"), ("/agents", "agent")]
        collections += [(k.collection, k.name) for k in Kind.registry.values() if not k.parent]
        for path, kind in collections:
            for item in await api.list_all(path):
                # the first name stays: a kind over a reference collection (profiles)
                # must not rename the ids every other golden shows
                out.setdefault(item["id"], f"<{kind}/{item['name']}>")
        return out

    return service.run(go)


def golden_json(plan_json: str, ids: dict[str, str]) -> str:
    data = json.loads(plan_json)
    for key in ("inputsDigest", "inputDigests", "fingerprints", "secretSalt", "secretDigests"):
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


def _options(case: Path) -> PlanOptions:
    if not (case / "options.json").exists():
        return PlanOptions(now=NOW)
    data = json.loads((case / "options.json").read_text())
    return PlanOptions(
        allow_past_start=data.get("allowPastStart", False),
        allow_cancel_running=data.get("allowCancelRunning", False),
        now=datetime.fromisoformat(data["now"]) if "now" in data else NOW,
    )


@pytest.mark.parametrize("case", discover(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_golden_case(case: Path, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    desired = (case / "desired.yaml").read_text()
    if not re.search(r"^workspace:", desired, re.M):
        desired = "workspace: golden\n" + desired
    (root / "agentform.yaml").write_text(desired)
    if (case / "files").is_dir():
        shutil.copytree(case / "files", root, dirs_exist_ok=True)
    env = json.loads((case / "env.json").read_text()) if (case / "env.json").exists() else {}
    service = Service(tmp_path / "service.db")
    try:
        _plan_and_apply(case, root, service, env)
    finally:
        service.close()


def _plan_and_apply(case: Path, root: Path, service: Service, env: dict[str, str]) -> None:
    options = _options(case)
    if (case / "live.json").exists():
        service.seed_live(json.loads((case / "live.json").read_text()))
    service.log.reset()
    if (case / "error.txt").exists():
        with pytest.raises(AgentformError) as info:
            service.plan(root, options, environ=env)
        check(case / "error.txt", str(info.value) + "\n")
        assert service.log.writes() == [], "a failed plan must make no write"
        return
    plan = service.plan(root, options, environ=env)
    assert service.log.writes() == [], "planning must never write"
    ids = _ids(service)
    check(case / "plan.txt", TextView().plan(plan))
    check(case / "plan.json", golden_json(plan.model_dump_json(), ids))
    markdown = MarkdownView().plan(plan)
    check(case / "plan.md", markdown)
    check_markdown_structure(plan, markdown)
    for value in env.values():  # secret() values never reach a plan
        assert value not in plan.model_dump_json() and value not in TextView().plan(plan)
    report = service.apply(root, plan, environ=env)
    assert report.ok, [(r.change.id, r.error) for r in report.results]
    again = service.plan(root, options, environ=env)
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
        assert [h.split(":")[0] for h in heads] == [SIGNS[c.action] + " " + c.id for c in mine]
    if kinds:
        header, *rows = doc.tables[0]
        for row in rows:
            kind = row[0].strip("`")
            for action, count in zip(header[1:], row[1:], strict=True):
                expected = sum(c.kind == kind and c.action == action for c in plan.changes)
                assert int(count) == expected
    else:
        said = "".join(doc.paragraphs)
        assert not doc.tables
        if plan.cannotApply:  # no match is claimed while objects differ
            assert "No changes to apply;" in said and "matches the files" not in said
        else:
            assert "No changes." in said
