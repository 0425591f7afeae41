"""Partial plans: --target and --exclude (globs), what a target pulls in (its children
and what it depends on, said in the plan), what an exclude takes along, the partial
warning in the header, a saved partial plan applied as it is."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agentform.cli.main import cli
from agentform.config.loader import load_workspace
from agentform.core.errors import AgentformError
from agentform.engine.apply import apply_plan
from agentform.engine.model import Plan
from agentform.engine.planfile import dump_plan, load_plan
from agentform.engine.planner import make_plan
from agentform.kinds.context import PlanOptions
from agentform.output.markdown import MarkdownView
from agentform.output.text import TextView
from tests.markdown_check import structure
from tests.provisioner.contract_kinds import ALPHA, FakeApi
from tests.provisioner.harness import write_workspace

QUICKSTART = Path(__file__).parents[2] / "examples" / "quickstart"
FILES = f"""\
folders:
  - name: inbox
  - name: docs
    links:
      - {{agent: alpha}}
  - name: other
jobs:
  - {{name: nightly, agent: {ALPHA}, folder: inbox}}
"""


def plan(
    api: FakeApi, root: Path, targets: tuple[str, ...] = (), excludes: tuple[str, ...] = ()
) -> Plan:
    workspace = load_workspace(root)
    options = PlanOptions(targets=targets, excludes=excludes)
    return asyncio.run(make_plan(workspace, api, "test", options))


@pytest.fixture
def files(ws: Path) -> Path:
    return write_workspace(ws, {"agentform.yaml": "workspace: contract\n", "w.yaml": FILES})


def ids(p: Plan) -> list[str]:
    return [c.id for c in p.changes]


def test_a_target_pulls_in_what_it_depends_on_and_says_so(contract: FakeApi, files: Path) -> None:
    partial = plan(contract, files, targets=("jobs/alpha/nightly",))
    assert ids(partial) == ["folders/inbox", "jobs/alpha/nightly"]
    inbox = partial.changes[0]
    assert inbox.reason == "not in live; pulled in: jobs/alpha/nightly needs it"
    assert partial.partial and partial.targets == ("jobs/alpha/nightly",)
    assert partial.summary.create == 2
    assert set(partial.fingerprints) == {"folders/inbox", "jobs/alpha/nightly"}
    warning = partial.warnings[0].message
    assert warning.startswith("this plan is partial (--target jobs/alpha/nightly): 3 other")
    text = TextView().plan(partial)
    assert text.splitlines()[2].startswith("Warning: this plan is partial")
    assert "pulled in: jobs/alpha/nightly needs it" in text


def test_a_target_takes_its_children_and_globs_match(contract: FakeApi, files: Path) -> None:
    assert ids(plan(contract, files, targets=("folders/docs",))) == [
        "folders/docs",
        "folderLinks/alpha/docs",
    ]
    assert ids(plan(contract, files, targets=("folders/[io]*",))) == [
        "folders/inbox",
        "folders/other",
    ]
    assert len(plan(contract, files, targets=("folders",)).changes) == 4  # a kind: all of it


def test_an_exclude_takes_along_what_needs_it(contract: FakeApi, files: Path) -> None:
    partial = plan(contract, files, excludes=("folders/inbox",))
    assert ids(partial) == ["folders/docs", "folders/other", "folderLinks/alpha/docs"]
    messages = [w.message for w in partial.warnings]
    assert "left out because they need an excluded change: jobs/alpha/nightly" in messages
    both = plan(contract, files, targets=("folders/*",), excludes=("folders/docs",))
    assert ids(both) == ["folders/inbox", "folders/other"]


def test_a_target_that_matches_nothing_is_a_warning(contract: FakeApi, files: Path) -> None:
    partial = plan(contract, files, targets=("folders/nope",))
    assert not partial.has_changes
    assert "--target folders/nope matches no change" in [w.message for w in partial.warnings]


def test_an_unknown_kind_is_refused_before_any_call(contract: FakeApi, files: Path) -> None:
    with pytest.raises(AgentformError, match="no kind 'foldrs' \\(did you mean 'folders'\\?\\)"):
        plan(contract, files, targets=("foldrs/inbox",))
    assert contract.calls == []


def test_a_saved_partial_plan_applies_only_its_changes(contract: FakeApi, files: Path) -> None:
    workspace = load_workspace(files)
    saved = load_plan(dump_plan(plan(contract, files, targets=("folders/other",))))
    assert saved.partial and ids(saved) == ["folders/other"]
    report = asyncio.run(apply_plan(saved, contract, values=workspace.sensitive_values()))
    assert report.ok and [w[1] for w in contract.writes()] == ["/folders"]
    rest = plan(contract, files)
    assert "folders/other" not in ids(rest) and len(rest.changes) == 4 and not rest.partial


def test_markdown_puts_the_partial_warning_first(contract: FakeApi, files: Path) -> None:
    partial = plan(contract, files, targets=("jobs/*",))
    doc = structure(MarkdownView().plan(partial))
    assert doc.alerts[0] == "[!WARNING]"
    assert doc.alerts[1].startswith("this plan is partial (--target jobs/*)")


def test_cli_target_and_exclude_on_plan_and_apply(tmp_path: Path) -> None:
    ws = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, ws, ignore=shutil.ignore_patterns(".agentform"))
    runner = CliRunner()

    def run(*args: str) -> Result:
        return runner.invoke(cli, [*args, "-C", str(ws)], catch_exceptions=False)

    shown = run("plan", "--target", "profilePools/checkout-*", "--exclude", "vaultTemplates")
    assert shown.exit_code == 0, shown.output
    assert "Warning: this plan is partial" in shown.stdout.splitlines()[2]
    assert "profilePools/checkout-eu" in shown.stdout and "prod-eu" not in shown.stdout
    applied = run("apply", "--auto-approve", "--target", "profilePools/*")
    assert applied.exit_code == 0 and "Apply: 2 succeeded" in applied.stdout
    rest = run("plan", "--format", "json")
    assert '"profilePools/' not in rest.stdout and '"vaultTemplates/Shop login"' in rest.stdout
    bad = run("plan", "--target", "profilePool/x")
    assert bad.exit_code == 1 and "did you mean 'profilePools'" in bad.output


def test_a_saved_plan_is_applied_whole_so_target_and_exclude_are_refused(tmp_path: Path) -> None:
    ws = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, ws, ignore=shutil.ignore_patterns(".agentform"))
    saved = tmp_path / "plan.json"
    runner = CliRunner()

    def run(*args: str) -> Result:
        return runner.invoke(cli, [*args, "-C", str(ws)], catch_exceptions=False)

    assert run("plan", "--out", str(saved)).exit_code == 0
    everything = json.loads(saved.read_text())["summary"]
    for flag, value in (("--target", "profileGroups"), ("--exclude", "profilePools/x")):
        refused = run("apply", str(saved), flag, value)
        assert refused.exit_code == 1, refused.output
        assert "targets are chosen when the plan is made" in refused.output
        assert "plan --target" in refused.output and "--out" in refused.output
    untouched = run("plan", "--detailed-exitcode", "--format", "json")
    assert untouched.exit_code == 2 and json.loads(untouched.stdout)["summary"] == everything


def test_warnings_about_objects_outside_the_selection_are_left_out(
    contract: FakeApi, files: Path
) -> None:
    whole = plan(contract, files)
    asyncio.run(apply_plan(whole, contract, values=load_workspace(files).sensitive_values()))
    for job in contract.jobs.values():
        job["status"] = "running"
    (files / "w.yaml").write_text(FILES.replace("folder: inbox}", "folder: inbox, size: 9}"))
    running = "the job is running"
    assert running in [w.message for w in plan(contract, files).warnings]  # about jobs/...
    for targets, excludes in ((("folders/*",), ()), ((), ("jobs/*",))):
        partial = plan(contract, files, targets=targets, excludes=excludes)
        assert running not in [w.message for w in partial.warnings], (targets, excludes)
        assert partial.warnings[0].message.startswith("this plan is partial")  # no address
    aimed = plan(contract, files, targets=("jobs/alpha/*",))
    assert running in [w.message for w in aimed.warnings]
