"""The kind contract, exercised through small test kinds (contract_kinds.py):
keys of several parts, child objects, ids known after create, replace and
cancel, warnings, sensitive values compared through digests that include the
live id, a Plan frozen all the way down, and the order in levels."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentform.config.loader import load_workspace
from agentform.core.errors import AgentformError, DiagnosticsError
from agentform.engine.apply import ApplyReport, apply_plan
from agentform.engine.model import Plan
from agentform.engine.order import stages
from agentform.engine.planfile import dump_plan, load_plan
from agentform.engine.planner import make_plan
from agentform.kinds.context import PlanOptions
from agentform.kinds.keys import Key, address, parse_address
from agentform.output.text import TextView
from tests.provisioner.contract_kinds import ALPHA, FakeApi
from tests.provisioner.harness import write_workspace

CANARY = "canary-token-7f1d9c"


def plan(api: FakeApi, root: Path, **options: Any) -> Plan:
    workspace = load_workspace(root)
    return asyncio.run(make_plan(workspace, api, "test", PlanOptions(**options)))


def apply(api: FakeApi, root: Path, the_plan: Plan | None = None) -> ApplyReport:
    workspace = load_workspace(root)
    the_plan = the_plan or plan(api, root)
    return asyncio.run(apply_plan(the_plan, api, values=workspace.sensitive_values()))


def files(root: Path, body: str) -> Path:
    return write_workspace(root, {"agentform.yaml": "workspace: contract\n", "w.yaml": body})


FOLDER = f"""\
folders:
  - name: docs
    token: {CANARY}
    links:
      - {{agent: alpha, mode: write}}
      - {{agent: beta}}
"""


def test_keys_have_one_canonical_string_form() -> None:
    key = Key("checkout/agent", "50% off")
    assert str(key) == "checkout%2Fagent/50%25 off"
    assert Key.parse(str(key)) == key
    assert parse_address(address("jobs", key)) == ("jobs", key)
    assert str(Key("plain")) == "plain" and Key("plain") == ("plain",)
    with pytest.raises(ValueError):
        parse_address("no-slash")


@given(st.lists(st.text(alphabet="ab/%é2F5", max_size=6), min_size=1, max_size=3))
def test_a_keys_string_form_escapes_each_part_and_reads_back(parts: list[str]) -> None:
    key = Key(*parts)
    assert str(key) == "/".join(p.replace("%", "%25").replace("/", "%2F") for p in parts)
    assert Key.parse(str(key)) == key


def test_children_are_changes_of_their_own_made_after_their_parent(
    contract: FakeApi, ws: Path
) -> None:
    files(ws, FOLDER)
    first = plan(contract, ws)
    assert [(c.id, c.action) for c in first.changes] == [
        ("folders/docs", "create"),
        ("folderLinks/alpha/docs", "create"),
        ("folderLinks/beta/docs", "create"),
    ]
    link = first.changes[1]
    assert link.parent == "folders/docs" and link.dependsOn == ("folders/docs",)
    (call,) = link.calls
    assert call.path == f"/agents/{ALPHA}/links/(known after create)"
    assert [(s.at, s.idOf) for s in call.slots] == [(("path", 4), "folders/docs")]
    shown = TextView().plan(first)
    assert "+ folderLinks/alpha/docs" in shown and "folders/docs id: (known after create)" in shown
    assert apply(contract, ws, first).ok
    folder_id = next(iter(contract.folders))
    assert ("PUT", f"/agents/{ALPHA}/links/{folder_id}", {"mode": "write"}) in contract.calls
    assert not plan(contract, ws).has_changes


def test_a_parent_lists_the_complete_set_of_its_children(contract: FakeApi, ws: Path) -> None:
    files(ws, FOLDER)
    assert apply(contract, ws).ok
    files(ws, FOLDER.replace("      - {agent: beta}\n", ""))
    removed = plan(contract, ws)
    assert [(c.id, c.action, c.reason) for c in removed.changes] == [
        ("folderLinks/beta/docs", "delete", "not in the links of folders/docs")
    ]
    files(ws, f"folders:\n  - {{name: docs, token: {CANARY}}}\n")  # links not managed
    contract.calls.clear()
    unmanaged = plan(contract, ws)
    assert not unmanaged.has_changes
    assert not [c for c in contract.calls if c[1].endswith("/links")], "children read needlessly"


def test_an_id_known_after_create_fills_a_body(contract: FakeApi, ws: Path) -> None:
    files(
        ws,
        "folders:\n  - {name: inbox}\n"
        f"jobs:\n  - {{name: nightly, agent: {ALPHA}, folder: inbox}}\n",
    )
    first = plan(contract, ws)
    job = next(c for c in first.changes if c.kind == "jobs")
    assert job.id == "jobs/alpha/nightly"  # the agent's id written, its name in the key
    (call,) = job.calls
    assert call.body["folderId"] == "(known after create)"
    assert [(s.at, s.idOf) for s in call.slots] == [(("body", "folderId"), "folders/inbox")]
    assert job.after["folderId"] == "inbox"  # shown by name; its id is a slot
    assert [[c.id for c in s] for s in stages(first.changes)] == [
        ["folders/inbox"],
        ["jobs/alpha/nightly"],
    ]
    assert apply(contract, ws, first).ok
    (made,) = contract.jobs.values()
    assert made["folderId"] == next(iter(contract.folders))
    assert not plan(contract, ws).has_changes


def test_a_failed_create_leaves_what_needs_its_id_not_attempted(
    contract: FakeApi, ws: Path
) -> None:
    files(
        ws, "folders:\n  - {name: inbox}\njobs:\n  - {name: nightly, agent: alpha, folder: inbox}\n"
    )
    contract.fail.add(("POST", "folders"))
    report = apply(contract, ws)
    assert {r.change.id: r.status for r in report.results} == {
        "folders/inbox": "failed",
        "jobs/alpha/nightly": "not attempted",
    }
    assert not contract.jobs


def test_sensitive_values_are_compared_through_digests_of_the_live_id(
    contract: FakeApi, ws: Path
) -> None:
    files(ws, FOLDER)
    first = plan(contract, ws)
    create = first.changes[0]
    assert create.calls[0].body["token"] == "(sensitive)"
    assert [(s.at, s.sensitive) for s in create.calls[0].slots] == [
        (("body", "token"), "folders/docs/token")
    ]
    workspace = load_workspace(ws)
    assert workspace.secrets.scrub(f"x {CANARY} y") == "x (sensitive) y"  # outputs scrub it
    for text in (
        first.model_dump_json(),
        dump_plan(first),
        TextView().plan(first),
    ):
        assert CANARY not in text
    assert apply(contract, ws, first).ok
    assert list(contract.tokens.values()) == [CANARY]  # apply sent the value
    assert not plan(contract, ws).has_changes  # digest of (live id, value) matches
    files(ws, FOLDER.replace(CANARY, "another-token"))
    changed = plan(contract, ws)
    (change,) = changed.changes
    assert [(f.field, f.sensitive, dict(f.keys or {})) for f in change.changedFields] == [
        ("token", True, {"token": "changed"})
    ]
    assert "token.token: (sensitive, changed)" in TextView().plan(changed)
    assert "another-token" not in changed.model_dump_json()
    assert apply(contract, ws, changed).ok
    assert list(contract.tokens.values()) == ["another-token"]


def test_a_plan_whose_sensitive_value_is_gone_writes_nothing(contract: FakeApi, ws: Path) -> None:
    files(ws, FOLDER)
    first = plan(contract, ws)
    with pytest.raises(AgentformError, match="folders/docs/token"):
        asyncio.run(apply_plan(first, contract, values={}))
    assert contract.writes() == []


def test_replace_and_cancel_have_their_own_symbols_and_words(contract: FakeApi, ws: Path) -> None:
    job = "jobs:\n  - {name: nightly, agent: alpha, folder: inbox, size: 1}\n"
    files(ws, "folders:\n  - {name: inbox}\n" + job)
    assert apply(contract, ws).ok
    files(ws, "folders:\n  - {name: inbox}\n" + job.replace("size: 1", "size: 2"))
    replaced = plan(contract, ws)
    (change,) = replaced.changes
    assert change.action == "replace" and replaced.summary.replace == 1
    text = TextView().plan(replaced)
    assert "  -/+ jobs/alpha/nightly  replace: pending job differs" in text
    assert "Plan: 0 to create, 0 to update, 0 to delete, 1 to replace." in text
    old_id = change.liveId
    assert old_id is not None
    assert apply(contract, ws, replaced).ok
    assert contract.jobs[old_id]["status"] == "cancelled"
    assert not plan(contract, ws).has_changes  # the cancelled one is history
    files(
        ws,
        "folders:\n  - {name: inbox}\njobs:\n  - {name: nightly, agent: alpha, folder: inbox,"
        " size: 2, ensure: absent}\n",
    )
    cancelled = plan(contract, ws)
    assert [(c.action, c.reason) for c in cancelled.changes] == [("cancel", "declared absent")]
    text = TextView().plan(cancelled)
    assert "  x jobs/alpha/nightly  cancel: declared absent" in text
    assert "0 to delete, 1 to cancel." in text


def test_a_change_that_cannot_be_applied_is_a_warning_in_the_plan(
    contract: FakeApi, ws: Path
) -> None:
    job = "jobs:\n  - {name: nightly, agent: alpha, folder: inbox, size: 1}\n"
    files(ws, "folders:\n  - {name: inbox}\n" + job)
    assert apply(contract, ws).ok
    for item in contract.jobs.values():
        item["status"] = "running"
    files(ws, "folders:\n  - {name: inbox}\n" + job.replace("size: 1", "size: 5"))
    warned = plan(contract, ws)
    assert not warned.has_changes
    (warning,) = warned.warnings
    assert (warning.address, warning.message) == ("jobs/alpha/nightly", "the job is running")
    assert warning.position == "w.yaml:4:5"
    assert "Warning: jobs/alpha/nightly: the job is running (w.yaml:4:5)" in TextView().plan(warned)
    assert json.loads(warned.model_dump_json())["warnings"][0]["message"] == "the job is running"


def test_one_key_written_two_ways_is_declared_twice(contract: FakeApi, ws: Path) -> None:
    files(
        ws,
        "folders:\n  - {name: inbox}\njobs:\n  - {name: n, agent: alpha, folder: inbox}\n"
        f"  - {{name: n, agent: {ALPHA}, folder: inbox}}\n",
    )
    with pytest.raises(DiagnosticsError, match="'alpha/n' is declared twice"):
        plan(contract, ws)


def test_an_unknown_name_is_a_plan_error_with_a_suggestion(contract: FakeApi, ws: Path) -> None:
    files(ws, "folders:\n  - {name: inbox}\njobs:\n  - {name: n, agent: alpha, folder: inbx}\n")
    with pytest.raises(
        DiagnosticsError, match=r"no folder named 'inbx' \(did you mean 'inbox'\?\)"
    ):
        plan(contract, ws)
    assert contract.writes() == []


def test_a_lost_create_is_found_again_by_its_key(contract: FakeApi, ws: Path) -> None:
    files(
        ws, "folders:\n  - {name: inbox}\njobs:\n  - {name: nightly, agent: alpha, folder: inbox}\n"
    )
    contract.lose.add(("POST", "/jobs"))
    assert apply(contract, ws).ok
    assert len(contract.jobs) == 1 and not plan(contract, ws).has_changes


def test_the_plan_is_frozen_all_the_way_down(contract: FakeApi, ws: Path) -> None:
    files(ws, FOLDER + "jobs:\n  - {name: nightly, agent: alpha, folder: docs}\n")
    frozen = plan(contract, ws)
    change = frozen.changes[0]
    attempts: list[Callable[[], object]] = [
        lambda: frozen.changes.append(change),  # type: ignore[attr-defined]
        lambda: frozen.fingerprints.update({"x": "y"}),
        lambda: frozen.fingerprints.__setitem__("x", "y"),
        lambda: frozen.reads.__setitem__("folders", ()),
        lambda: frozen.unmanaged.__setitem__("folders", 1),
        lambda: change.calls[0].body.__setitem__("name", "other"),
        lambda: change.after.__setitem__("name", "other"),
        lambda: change.calls[0].slots.append(None),  # type: ignore[attr-defined]
        lambda: setattr(change, "action", "delete"),
        lambda: setattr(change.calls[0], "path", "/elsewhere"),
        lambda: setattr(frozen, "changes", ()),
    ]
    for number, attempt in enumerate(attempts):
        with pytest.raises((TypeError, AttributeError, ValueError)):
            attempt()
            print("mutated by attempt", number)
    assert frozen.changes[0].calls[0].body["name"] == "docs"
    assert load_plan(dump_plan(frozen)).changes == frozen.changes


def test_deletes_go_backward_through_the_levels(contract: FakeApi, ws: Path) -> None:
    files(
        ws, "folders:\n  - {name: inbox}\njobs:\n  - {name: nightly, agent: alpha, folder: inbox}\n"
    )
    assert apply(contract, ws).ok
    files(
        ws,
        "folders:\n  - {name: inbox, ensure: absent}\n  - {name: fresh}\n"
        "jobs:\n  - {name: nightly, agent: alpha, folder: inbox, ensure: absent}\n"
        "  - {name: other, agent: beta, folder: fresh}\n",
    )
    both = plan(contract, ws)
    assert [[(c.action, c.id) for c in s] for s in stages(both.changes)] == [
        [("create", "folders/fresh")],
        [("create", "jobs/beta/other")],
        [("cancel", "jobs/alpha/nightly")],
        [("delete", "folders/inbox")],
    ]
    assert [c.id for c in both.changes] == [c.id for s in stages(both.changes) for c in s]
    contract.calls.clear()
    assert apply(contract, ws, both).ok
    order = [(m, p.split("/")[1]) for m, p, _ in contract.writes()]
    assert order == [("POST", "folders"), ("POST", "jobs"), ("POST", "jobs"), ("DELETE", "folders")]


def test_an_older_plan_format_is_refused_clearly() -> None:
    with pytest.raises(AgentformError, match="has format 1, this agentform reads format 2"):
        load_plan('{"formatVersion": 1, "changes": []}')
