"""The markdown view read as GitHub would (markdown-it-py), its size cap, masking of
sensitive values, the apply report in every format, and apply progress."""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from rich.console import Console

from agentform.cli.main import cli
from agentform.cli.options import Options
from agentform.cli.views import view_of
from agentform.core.words import counted
from agentform.engine.apply import ApplyReport, ChangeResult
from agentform.engine.drift import DriftItem, DriftReport
from agentform.engine.model import Change, Plan, PlanWarning, Summary
from agentform.engine.targets import _partial_warning
from agentform.kinds.model import ApiCall, FieldChange
from agentform.output.markdown import MarkdownView
from agentform.output.markdown_blocks import code, marker
from agentform.output.markdown_document import GITHUB_LIMIT, NOTE_ROOM
from agentform.output.progress import LiveProgress
from agentform.output.text import TextView
from agentform.output.values import describe, diff_lines
from tests.markdown_check import structure

QUICKSTART = Path(__file__).parents[1] / "examples" / "quickstart"


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def big_plan(n: int, kinds: tuple[str, ...] = ("profilePools", "profileGroups")) -> Plan:
    changes = []
    for i in range(n):
        kind = kinds[i % len(kinds)]
        name = f"pool-{i:05d}"
        changes.append(
            Change(
                id=f"{kind}/{name}",
                kind=kind,
                key=name,
                action="create",
                reason="not in live",
                after={"name": name, "allowConcurrentUse": False, "members": ["bot-1", "bot-2"]},
                calls=[ApiCall(method="POST", path="/x", body={"name": name})],
            )
        )
    return Plan(
        workspace="scale",
        endpoint="local",
        organizationId="org",
        organizationName="demo",
        changes=changes,
        summary=Summary(create=n),
        inputsDigest="",
        fingerprints={},
    )


def headlines(code_text: str) -> list[str]:
    return [line for line in code_text.splitlines() if re.match(r"[-+~] \S", line)]


# -- size cap --------------------------------------------------------------------


def test_a_plan_over_the_limit_is_cut_between_changes() -> None:
    plan = big_plan(3000)
    whole = MarkdownView(limit=None).plan(plan)
    assert len(whole) > GITHUB_LIMIT
    capped = MarkdownView().plan(plan)
    assert len(capped) <= GITHUB_LIMIT
    doc = structure(capped)
    assert doc.marker == marker("plan", "scale") and doc.stray_code == 0
    shown = [h for s in doc.sections for h in headlines(s.code)]
    assert 0 < len(shown) < 3000
    for section in doc.sections:  # every change shown is shown whole: headline + 2 fields
        assert len(section.code.splitlines()) == 3 * len(headlines(section.code))
    note = doc.paragraphs[-1]
    left = 3000 - len(shown)
    assert f"{left} more changes were left out" in note
    assert "65,536" in note and "agentform plan" in note
    # what was cut is counted per kind
    for kind in ("profilePools", "profileGroups"):
        in_kind = sum(h.split(" ")[1].startswith(kind) for h in shown)
        if in_kind < 1500:
            assert f"{kind}: {1500 - in_kind}" in note


def test_a_small_limit_cuts_whole_sections_and_closes_every_block() -> None:
    plan = big_plan(40)
    capped = MarkdownView(limit=2500, whole="see the saved plan `plan.json`").plan(plan)
    assert len(capped) <= 2500
    doc = structure(capped)  # raises when a <details> is left open
    assert doc.headings == ["agentform plan: workspace `scale`"]
    assert "see the saved plan `plan.json`" in doc.paragraphs[-1]


def test_a_plan_under_the_limit_is_whole() -> None:
    plan = big_plan(10)
    text = MarkdownView().plan(plan)
    doc = structure(text)
    assert sum(len(headlines(s.code)) for s in doc.sections) == 10
    assert "left out" not in text


# -- structure and escaping -------------------------------------------------------


def test_marker_and_code_spans_hold_any_name() -> None:
    assert marker(
        "plan", "payments prod-->x"
    ) == "<!-- agentform:plan workspace=payments%20prod-->x -->".replace("-->x", "--%3Ex")
    assert structure(code("a`b") + "\n").paragraphs == ["``a`b``"]


def test_values_with_backticks_do_not_break_the_code_block() -> None:
    plan = big_plan(1)
    change = plan.changes[0].model_copy(
        update={"after": {"name": "x", "description": "```\n</details>"}}
    )
    text = MarkdownView().plan(plan.model_copy(update={"changes": [change]}))
    doc = structure(text)
    assert len(doc.sections) == 1 and "</details>" in doc.sections[0].code


def test_warnings_come_above_everything() -> None:
    warning = PlanWarning(message="started: cannot change it", address="batches/a/x")
    plan = big_plan(2).model_copy(update={"warnings": (warning,)})
    doc = structure(MarkdownView().plan(plan))
    assert doc.alerts == ["[!WARNING]", "batches/a/x: started: cannot change it"]
    text = MarkdownView().plan(plan)
    assert text.index("[!WARNING]") < text.index("### agentform plan")


# -- aligned list diffs --------------------------------------------------------------


def test_inserting_a_field_at_the_top_is_one_added_line() -> None:
    fields = [{"type": "text", "label": f"F{i}", "required": True} for i in range(5)]
    new = {"type": "email", "label": "Email", "required": True}
    change = FieldChange(field="fields", before=fields, after=[new, *fields])
    assert describe(change) == [f"+ fields[0]: {json.dumps(new)}"]
    assert diff_lines(change) == [f"+    fields[0]: {json.dumps(new)}"]


def test_deleting_shows_what_is_deleted_and_edits_stay_in_place() -> None:
    fields = [{"type": "text", "label": f"F{i}", "required": True} for i in range(4)]
    after = [fields[0], {**fields[1], "required": False}, fields[3]]
    change = FieldChange(field="fields", before=fields, after=after)
    assert describe(change) == [
        "fields[1].required: true -> false",
        f"- fields[2]: {json.dumps(fields[2])}",
    ]


# -- sensitive values -------------------------------------------------------------------


@pytest.fixture
def secret_ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(QUICKSTART, ws, ignore=shutil.ignore_patterns(".agentform"))
    vault = ws / "vault.yaml"
    vault.write_text(
        vault.read_text().replace("Sign-in for the shop's back office", "{{ secret('SHOP_NOTE') }}")
    )
    return ws


def test_markdown_masks_sensitive_values(secret_ws: Path) -> None:
    env = {"SHOP_NOTE": "hunter2-very-secret"}
    created = run("plan", "--format", "markdown", "-C", str(secret_ws), env=env)
    assert created.exit_code == 0
    assert "hunter2" not in created.stdout and "(sensitive)" in created.stdout
    run("apply", "--auto-approve", "-C", str(secret_ws), env=env)
    changed = run(
        "plan", "--format", "markdown", "-C", str(secret_ws), env={"SHOP_NOTE": "other-secret-2"}
    )
    assert "other-secret-2" not in changed.stdout and "hunter2" not in changed.stdout
    doc = structure(changed.stdout)
    assert "~    description: (sensitive, changed)" in doc.sections[0].code


# -- the apply report in three formats ------------------------------------------------


def quickstart_changes(ws: Path) -> int:
    return int(
        json.loads(run("plan", "--format", "json", "-C", str(ws)).stdout)["summary"]["create"]
    )


def test_apply_report_markdown_and_json(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(QUICKSTART, ws, ignore=shutil.ignore_patterns(".agentform"))
    n = quickstart_changes(ws)
    result = run("apply", "--auto-approve", "--format", "markdown", "-C", str(ws))
    assert result.exit_code == 0, result.output
    doc = structure(result.stdout)
    assert doc.marker == "<!-- agentform:apply workspace=quickstart -->"
    assert f"**Apply: {n} succeeded, 0 failed, 0 not attempted.**" in doc.paragraphs[0]
    header, *rows = doc.tables[0]
    assert header == ["kind", "succeeded", "failed", "not attempted"]
    assert sum(int(r[1]) for r in rows) == n
    assert all(s.info == "diff" for s in doc.sections)


def test_failed_changes_are_above_everything_in_the_report() -> None:
    plan = big_plan(3)
    results = [
        ChangeResult(plan.changes[0], "succeeded", calls_made=1),
        ChangeResult(plan.changes[1], "failed", "POST /x: 409 name taken"),
        ChangeResult(plan.changes[2], "not attempted", "depends on x"),
    ]
    text = MarkdownView().report(ApplyReport(results), "scale")
    doc = structure(text)
    assert doc.alerts[0] == "[!CAUTION]"
    assert doc.alerts[1] == "`profileGroups/pool-00001`: POST /x: 409 name taken"
    assert "**Apply: 1 succeeded, 1 failed, 1 not attempted.**" in doc.paragraphs[0]


# -- progress ------------------------------------------------------------------------------


def test_live_progress_shows_done_total_failures_and_elapsed() -> None:
    plan = big_plan(3)
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100, no_color=True)
    with LiveProgress(TextView(), 3, console) as hooks:
        hooks.finished(ChangeResult(plan.changes[0], "succeeded"))
        hooks.finished(ChangeResult(plan.changes[1], "failed", "boom"))
        hooks.finished(ChangeResult(plan.changes[2], "succeeded"))
    screen = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())
    assert "3/3" in screen and "1 failed" in screen and "0:00:0" in screen
    assert "create profileGroups/pool-00001: FAILED (boom)" in screen


def test_apply_on_a_terminal_uses_the_live_display(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agentform.cli.apply_cmd as apply_cmd

    ws = tmp_path / "ws"
    shutil.copytree(QUICKSTART, ws, ignore=shutil.ignore_patterns(".agentform"))
    n = quickstart_changes(ws)
    monkeypatch.setattr(apply_cmd, "stdout_is_terminal", lambda: True)
    result = run("apply", "--auto-approve", "--no-color", "-C", str(ws))
    assert result.exit_code == 0
    assert "Applying" in result.stdout and f"{n}/{n}" in result.stdout
    monkeypatch.undo()
    piped = tmp_path / "ws2"
    shutil.copytree(QUICKSTART, piped, ignore=shutil.ignore_patterns(".agentform"))
    plain = run("apply", "--auto-approve", "-C", str(piped))
    assert (
        "Applying" not in plain.stdout and "create profilePools/checkout-eu: done" in plain.stdout
    )


def test_show_renders_a_saved_plan_and_the_cut_note_points_at_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(QUICKSTART, ws, ignore=shutil.ignore_patterns(".agentform"))
    saved = tmp_path / "plan.json"
    markdown = run("plan", "--format", "markdown", "--out", str(saved), "-C", str(ws))
    assert markdown.exit_code == 0
    assert structure(run("show", str(saved), "--format", "markdown").stdout) == structure(
        markdown.stdout
    )
    text = run("show", str(saved))
    n = quickstart_changes(ws)
    assert text.exit_code == 0 and f"Plan: {n} to create" in text.stdout
    assert json.loads(run("show", str(saved), "--format", "json").stdout)["summary"]["create"] == n
    broken = tmp_path / "broken.json"
    broken.write_text("{}")
    assert run("show", str(broken)).exit_code == 1
    view = view_of(Options(), "markdown", saved)
    assert isinstance(view, MarkdownView)
    assert "`agentform show plan.json`" in view.whole and "artifact" in view.whole


# -- counts agree with their nouns ---------------------------------------------------


def one_drifted_object() -> DriftReport:
    item = DriftItem(id="profilePools/a", kind="profilePools", key="a", drift="missing", reason="r")
    return DriftReport(
        workspace="w", endpoint="local", organizationId="o", organizationName="o", items=(item,)
    )


def test_counts_agree_with_their_nouns_and_verbs() -> None:
    assert counted(1, "object") == "1 object" and counted(0, "object") == "0 objects"
    assert counted(2, "other change", "were left out") == "2 other changes were left out"
    assert counted(1, "other change", "were left out") == "1 other change was left out"
    assert counted(1, "object", "differ") == "1 object differs"
    assert counted(3, "object", "differ") == "3 objects differ"
    assert TextView().drift(one_drifted_object()).count("Drift: 1 object differs from the files")
    markdown = MarkdownView().drift(one_drifted_object())
    assert "**Drift: 1 object differs from the files**" in markdown
    warning = _partial_warning(["profilePools/a"], [], 1).message
    assert "1 other change was left out" in warning


def test_one_change_left_out_of_markdown_is_singular() -> None:
    plan = big_plan(40)
    whole = len(MarkdownView(limit=None).plan(plan))
    notes = (MarkdownView(limit=limit).plan(plan) for limit in range(whole + NOTE_ROOM, 0, -5))
    cut = next(note for note in notes if "left out" in note)
    assert "**1 more change was left out**" in cut
