"""Batches against the in-process service: minimal reads, 10,000 items from a file,
a lost create found again by (agent, name), export, and the CLI's options."""

from __future__ import annotations

import json
import math
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from agentform.api.client import ApiClient
from agentform.cli.main import cli
from agentform.config.loader import Workspace, load_workspace
from agentform.core.errors import DiagnosticsError, StalePlanError
from agentform.engine.apply import ApplyReport, apply_plan
from agentform.engine.export import export_live
from agentform.engine.planfile import dump_plan, load_plan, verified_plan
from agentform.kinds.context import PlanOptions
from agentform.output.markdown import MarkdownView
from agentform.output.text import TextView
from tests.provisioner.harness import Service, write_workspace

ROOT = "workspace: batches\n"
START = "2030-01-01T00:00:00Z"


def batch(name: str, items: str, agent: str = "support-agent", start: str = START) -> str:
    return (
        f"  - name: {name}\n    agent: {agent}\n    startAt: {start}\n"
        "    config: {type: timeBatching, batchSize: 10, batchInterval: 60}\n"
        f"    {items}\n"
    )


def gets(service: Service, suffix: str) -> list[str]:
    return [p for m, p in service.log.calls if m == "GET" and p.endswith(suffix)]


def test_an_unchanged_workspace_reads_items_only_of_declared_pending_batches(
    service: Service, ws: Path
) -> None:
    declared = "".join(batch(f"b-{i:03d}", "items: [{inputs: {n: '1'}}]") for i in range(105))
    write_workspace(ws, {"agentform.yaml": ROOT, "b.yaml": "batches:\n" + declared})
    assert service.apply(ws).ok
    service.seed_live(
        {
            "batches": [  # live but not declared: not read in depth
                {
                    "name": "other",
                    "agent": "support-agent",
                    "startAt": START,
                    "config": {"type": "timeBatching", "batchSize": 1, "batchInterval": 1},
                    "items": [{}],
                }
            ]
        }
    )
    service.log.reset()
    plan = service.plan(ws)
    assert not plan.has_changes, TextView().plan(plan)
    assert service.log.writes() == []
    assert len(gets(service, "/execution-batches")) == math.ceil(106 / 100)
    item_reads = gets(service, "/items")
    assert len(item_reads) == 105 == len(set(item_reads))  # one page each, declared only
    assert plan.summary.unmanaged == 1


@pytest.mark.slow
def test_ten_thousand_items_from_a_csv_file(service: Service, ws: Path) -> None:
    rows = ["order,metadata.shard"] + [f"O-{i:05d},{i % 7}" for i in range(10_000)]
    write_workspace(
        ws,
        {
            "agentform.yaml": ROOT,
            "b.yaml": "batches:\n" + batch("big", "itemsFile: data/orders.csv"),
            "data/orders.csv": "\n".join(rows) + "\n",
        },
    )
    started = time.perf_counter()
    plan = service.plan(ws)
    planned = time.perf_counter() - started
    (change,) = plan.changes
    assert len(change.calls[0].body["items"]) == 10_000
    text = TextView().plan(plan)
    assert "items: 10000 entries, digest sha256:" in text and "O-00002" in text
    assert "O-09999" not in text and len(text.splitlines()) < 30  # summarised
    assert "O-09999" in TextView(verbose=True).plan(plan)  # -v prints them all
    markdown = MarkdownView().plan(plan)  # a pull-request comment: summarised too
    assert "items: 10000 entries, digest sha256:" in markdown and "O-00002" in markdown
    assert "O-09999" not in markdown and len(markdown.splitlines()) < 40
    assert "O-09999" in MarkdownView(limit=None, verbose=True).plan(plan)
    assert service.apply(ws, plan).ok
    service.log.reset()
    started = time.perf_counter()
    again = service.plan(ws)
    replanned = time.perf_counter() - started
    assert not again.has_changes
    assert len(gets(service, "/items")) == 100  # 10,000 items, 100 a page, compared one by one
    assert planned < 30 and replanned < 30, (planned, replanned)
    (ws / "data/orders.csv").write_text("\n".join(rows).replace("O-09999", "O-X") + "\n")
    changed = service.plan(ws)
    assert [c.action for c in changed.changes] == ["replace"]
    shown = TextView().plan(changed)
    assert '- items[9999]: {"inputs": {"order": "O-09999"}' in shown
    assert '+ items[9999]: {"inputs": {"order": "O-X"}' in shown


def test_items_file_problems_name_the_file_and_line(ws: Path) -> None:
    write_workspace(
        ws,
        {
            "agentform.yaml": ROOT,
            "b.yaml": "batches:\n" + batch("b", "itemsFile: rows.csv"),
            "rows.csv": "order,version\nA-1,1\nA-2,two\n",
        },
    )
    with pytest.raises(DiagnosticsError) as info:
        load_workspace(ws)
    assert "rows.csv:3:1: error: itemsFile item 2: version:" in str(info.value)


@pytest.mark.parametrize("start", [START, "2030-01-01T01:00:00+01:00"], ids=["Z", "offset"])
def test_a_lost_batch_create_is_found_again_by_agent_and_name(
    service: Service, ws: Path, start: str
) -> None:
    """Adopted also when the files write startAt with an offset the service answers as Z."""
    name = f"n-{len(start)}"  # one batch per case on the module's service
    files = "batches:\n" + batch(name, "items: [{}]", start=f'"{start}"')
    write_workspace(ws, {"agentform.yaml": ROOT, "b.yaml": files})
    lost: list[int] = []

    def lose_once(method: str, path: str) -> bool:
        if (method, path) == ("POST", "/execution-batches") and not lost:
            lost.append(1)
            return True
        return False

    service.log.lose_answer = lose_once
    assert service.apply(ws).ok
    created = [c for c in service.log.calls if c == ("POST", "/execution-batches")]
    assert len(created) == 1  # looked up by (agent, name), adopted, not sent again
    assert not service.plan(ws).has_changes


def test_export_leaves_finished_batches_out_and_plans_clean(
    service: Service, ws: Path, tmp_path: Path
) -> None:
    files = "profilePools:\n  - {name: pool-a}\nbatches:\n"
    files += batch("pending", "items: [{agentProfilePool: pool-a, inputs: {x: '1'}}, {}]")
    files += batch("paused", "items: [{}]")
    write_workspace(ws, {"agentform.yaml": ROOT, "b.yaml": files})
    assert service.apply(ws).ok
    service.seed_live(
        {
            "batches": [
                {
                    "name": "done",
                    "agent": "support-agent",
                    "startAt": "2026-01-01T00:00:00Z",  # passed: it runs at once
                    "config": {"type": "timeBatching", "batchSize": 5, "batchInterval": 60},
                    "items": [{}],
                }
            ]
        }
    )

    async def pause(api: ApiClient) -> None:
        (paused,) = await api.list_all("/execution-batches", {"searchName": "paused"})
        await api.request("POST", f"/execution-batches/{paused['id']}/pause")

    service.run(pause)
    statuses = {
        b["name"]: b["status"] for b in service.run(lambda a: a.list_all("/execution-batches"))
    }
    assert statuses == {"pending": "pending", "paused": "paused", "done": "completed"}
    documents = service.run(lambda api: export_live(load_workspace(ws), api))
    assert [b["name"] for b in documents["batches"]] == ["paused", "pending"]
    pending = next(b for b in documents["batches"] if b["name"] == "pending")
    assert pending["items"] == [{"inputs": {"x": "1"}, "agentProfilePool": "pool-a"}, {}]
    exported = write_workspace(
        tmp_path / "exported", {"agentform.yaml": ROOT, "all.yaml": yaml.safe_dump(documents)}
    )
    plan = service.plan(exported)
    assert not plan.has_changes, TextView().plan(plan)


def test_the_cli_warns_and_allow_past_start_creates(tmp_path: Path) -> None:
    ws = write_workspace(
        tmp_path / "ws",
        {
            "agentform.yaml": "workspace: cli\nendpoint: local\n",
            "b.yaml": "batches:\n" + batch("late", "items: [{}]", start="2026-01-01T00:00:00Z"),
        },
    )
    runner = CliRunner()
    plan = runner.invoke(cli, ["plan", "--detailed-exitcode", "-C", str(ws)])
    assert plan.exit_code == 0, plan.output  # a warning is not a change
    assert "Warning: batches/support-agent/late: startAt 2026-01-01T00:00:00Z has passed" in (
        plan.output
    )
    as_json = runner.invoke(cli, ["plan", "--format", "json", "-C", str(ws)])
    warnings = json.loads(as_json.output)["warnings"]
    assert warnings[0]["address"] == "batches/support-agent/late"
    assert warnings[0]["position"] == "b.yaml:2:5"
    allowed = runner.invoke(cli, ["apply", "--auto-approve", "--allow-past-start", "-C", str(ws)])
    assert allowed.exit_code == 0, allowed.output
    assert "create batches/support-agent/late: done" in allowed.output


def test_a_saved_plan_whose_batch_start_has_passed_since_is_refused(
    service: Service, ws: Path
) -> None:
    """Planned in a pull request, applied days later: a batch whose startAt passed in
    between would start at once; apply refuses before any write unless
    --allow-past-start (the plan said it would be created in the future)."""
    files = "profilePools:\n  - {name: p}\nbatches:\n" + batch(
        "soon", "items: [{}]", start="2026-01-01T00:00:00Z"
    )
    write_workspace(ws, {"agentform.yaml": ROOT, "b.yaml": files})
    before = PlanOptions(now=datetime(2025, 12, 31, tzinfo=UTC))
    saved = dump_plan(service.plan(ws, before))
    assert "startAt" in saved and '"create"' in saved
    workspace = load_workspace(ws)
    service.log.reset()

    with pytest.raises(StalePlanError) as info:
        service.run(lambda api: _apply_saved(api, saved, workspace, PlanOptions()))
    assert str(info.value) == (
        "plan is stale: batches/support-agent/soon: its startAt 2026-01-01T00:00:00Z has "
        "passed since the plan was made, so it would start at once; plan again, or apply "
        "with --allow-past-start; nothing was written"
    )
    assert service.log.writes() == []
    allowed = PlanOptions(allow_past_start=True)
    report = service.run(lambda api: _apply_saved(api, saved, workspace, allowed))
    assert report.ok and len(report.results) == 2


async def _apply_saved(
    api: ApiClient, text: str, workspace: Workspace, options: PlanOptions
) -> ApplyReport:
    plan = await verified_plan(load_plan(text), workspace, api, "test", options)
    return await apply_plan(plan, api)


def test_a_declared_batch_that_cannot_be_created_is_not_reported_as_a_match(
    tmp_path: Path,
) -> None:
    """A missing batch whose startAt has passed: nothing can be applied, but the
    service differs from the files, so neither plan nor drift says it matches."""
    ws = write_workspace(
        tmp_path / "ws",
        {
            "agentform.yaml": "workspace: cli\nendpoint: local\n",
            "b.yaml": "batches:\n" + batch("late", "items: [{}]", start="2026-01-01T00:00:00Z"),
            "p.yaml": "profilePools:\n  - {name: pool-a}\n",
        },
    )
    runner = CliRunner()
    assert runner.invoke(cli, ["apply", "--auto-approve", "-C", str(ws)]).exit_code == 0
    plan = runner.invoke(cli, ["plan", "--detailed-exitcode", "-C", str(ws)])
    assert plan.exit_code == 0, plan.output  # nothing can be applied
    assert "matches the files" not in plan.output
    assert (
        "No changes to apply; 1 object differs from the files where nothing can be "
        "applied (see warnings)" in plan.output
    )
    as_json = json.loads(runner.invoke(cli, ["plan", "--format", "json", "-C", str(ws)]).output)
    assert [c["id"] for c in as_json["cannotApply"]] == ["batches/support-agent/late"]
    markdown = runner.invoke(cli, ["plan", "--format", "markdown", "-C", str(ws)]).output
    assert "matches the files" not in markdown and "1 object differs" in markdown

    drift = runner.invoke(cli, ["drift", "-C", str(ws)])
    assert drift.exit_code == 2, drift.output
    assert "No drift" not in drift.output
    assert "batches/support-agent/late  missing in the service" in drift.output
    as_json = json.loads(runner.invoke(cli, ["drift", "--format", "json", "-C", str(ws)]).output)
    assert as_json["drifted"] and as_json["counts"]["missing"] == 1

    targeted = runner.invoke(cli, ["plan", "--target", "profilePools/pool-a", "-C", str(ws)])
    assert targeted.exit_code == 0, targeted.output
    assert "The live workspace matches the files" not in targeted.output
    assert "The targeted part of the live workspace matches the files" in targeted.output
    assert "differs from the files" not in targeted.output  # the batch is not targeted

    excluded = runner.invoke(cli, ["plan", "--exclude", "batches", "-C", str(ws)])
    assert "The live workspace, but for what was excluded, matches the files" in excluded.output
    (ws / "p2.yaml").write_text("profilePools:\n  - {name: pool-b}\n")
    more = runner.invoke(cli, ["plan", "--detailed-exitcode", "-C", str(ws)])
    assert more.exit_code == 2, more.output
    assert (
        "Plan: 1 to create, 0 to update, 0 to delete. (1 unchanged, 0 not managed); 1 more "
        "object differs from the files where nothing can be applied (see warnings)."
    ) in more.output


def test_a_secret_in_item_inputs_is_sent_and_never_shown(service: Service, ws: Path) -> None:
    """secret() works in a batch item's inputs as everywhere a string does: the request
    holds the value, every view the mask; a rotation replaces the pending batch."""
    value = 'sé"cr\\et-välue'
    files = "batches:\n" + batch(
        "with-secret", "items: [{inputs: {token: \"{{ secret('TOK') }}\", n: 1}}]"
    )
    write_workspace(ws, {"agentform.yaml": ROOT, "b.yaml": files})
    env = {"TOK": value}
    plan = service.plan(ws, environ=env)
    workspace = load_workspace(ws, environ=env)
    shown = TextView(scrub=workspace.secrets.scrub).plan(plan)
    assert '{"token": "(sensitive)", "n": 1}' in shown and value not in shown
    assert value not in dump_plan(plan)
    assert service.apply(ws, plan, environ=env).ok
    (batch_id,) = [b["id"] for b in service.run(lambda api: api.list_all("/execution-batches"))]
    items = service.run(lambda api: api.list_all(f"/execution-batches/{batch_id}/items"))
    assert [i["request"]["inputs"] for i in items] == [{"token": value, "n": 1}]
    assert not service.plan(ws, environ=env).has_changes
    rotated = service.plan(ws, environ={"TOK": "another-välue"})
    assert [c.action for c in rotated.changes] == ["replace"]


def test_a_batch_whose_request_would_exceed_the_services_body_limit_is_a_plan_error(
    service: Service, ws: Path
) -> None:
    """9,000 rows of 1.4 MB planned cleanly, then apply met 413: the limit is the
    service's (rules/requests.py), refused at plan with the object's position."""
    rows = ["order,note"] + [f"O-{i:05d},{'é' * 70}" for i in range(9_000)]
    write_workspace(
        ws,
        {
            "agentform.yaml": ROOT,
            "b.yaml": "batches:\n" + batch("big", "itemsFile: orders.csv"),
            "orders.csv": "\n".join(rows) + "\n",
        },
    )
    with pytest.raises(DiagnosticsError) as info:
        service.plan(ws)
    (problem,) = [d.render() for d in info.value.diagnostics]
    assert problem.startswith("b.yaml:2:5: error: batches/support-agent/big: the request of POST")
    assert "over the 1 MiB the service accepts in one request" in problem
    assert service.log.writes() == []
