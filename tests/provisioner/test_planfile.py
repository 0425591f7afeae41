"""Saved plans: exactly executed, refused when stale, secrets never in the file."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentform.api.client import ApiClient
from agentform.config.loader import load_workspace
from agentform.core.errors import AgentformError, StalePlanError
from agentform.engine.apply import ApplyReport, apply_plan
from agentform.engine.planfile import dump_plan, load_plan, verified_plan
from agentform.kinds import kinds_in_order
from tests.provisioner.harness import Service, write_workspace

SECRET = "s3cr3t-description-value"


def saved_plan(service: Service, ws: Path, environ: dict[str, str]) -> str:
    return dump_plan(service.plan(ws, environ=environ))


def apply_saved(service: Service, ws: Path, text: str, environ: dict[str, str]) -> ApplyReport:
    workspace = load_workspace(ws, environ=environ)

    async def go(api: ApiClient) -> ApplyReport:
        plan = await verified_plan(load_plan(text), workspace, api, "test")
        return await apply_plan(plan, api)

    return service.run(go)


@pytest.fixture
def secret_ws(ws: Path) -> Path:
    return write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: saved\n",
            "vault.yaml": "vaultTemplates:\n  - name: T\n    kind: custom\n"
            "    description: \"{{ secret('TPL_DESC') }}\"\n"
            "    fields: [{type: text, label: Note, required: false}]\n",
            "pools.yaml": "profilePools:\n  - {name: a, members: [bot-1]}\n",
        },
    )


def test_secret_values_are_masked_in_the_file_and_restored_on_apply(
    service: Service, secret_ws: Path
) -> None:
    env = {"TPL_DESC": SECRET}
    text = saved_plan(service, secret_ws, env)
    assert SECRET not in text and "((secret:TPL_DESC))" in text
    assert apply_saved(service, secret_ws, text, env).ok

    async def read(api: ApiClient) -> Any:
        return await api.list_all("/vault/templates", {"searchName": "T"})

    assert [t["description"] for t in service.run(read) if t["name"] == "T"] == [SECRET]
    assert not service.plan(secret_ws, environ=env).has_changes


def test_a_changed_secret_makes_the_plan_stale(service: Service, secret_ws: Path) -> None:
    text = saved_plan(service, secret_ws, {"TPL_DESC": SECRET})
    service.log.reset()
    with pytest.raises(StalePlanError, match="secret TPL_DESC changed"):
        apply_saved(service, secret_ws, text, {"TPL_DESC": "other"})
    assert service.log.writes() == []


def test_a_live_change_since_the_plan_is_refused_before_any_write(
    service: Service, ws: Path
) -> None:
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: saved\n",
            "pools.yaml": "profilePools:\n  - {name: a, allowConcurrentUse: true}\n  - {name: b}\n",
        },
    )
    service.seed_live({"profilePools": [{"name": "a"}]})
    text = saved_plan(service, ws, {})

    async def touch(api: ApiClient) -> None:
        pool = (await api.list_all("/agent-profile-pools"))[0]
        await api.request(
            "PATCH",
            f"/agent-profile-pools/{pool['id']}",
            json={"selectionStrategy": "most_recently_used"},
        )

    service.run(touch)
    service.log.reset()
    with pytest.raises(StalePlanError, match="profilePools/a changed since the plan"):
        apply_saved(service, ws, text, {})
    assert service.log.writes() == []


def test_an_object_created_since_the_plan_is_refused(service: Service, ws: Path) -> None:
    write_workspace(
        ws, {"agentform.yaml": "workspace: saved\n", "pools.yaml": "profilePools:\n  - {name: a}\n"}
    )
    text = saved_plan(service, ws, {})
    service.seed_live({"profilePools": [{"name": "a"}]})
    with pytest.raises(StalePlanError, match="profilePools/a"):
        apply_saved(service, ws, text, {})


def test_changed_files_make_the_plan_stale(service: Service, ws: Path) -> None:
    write_workspace(
        ws, {"agentform.yaml": "workspace: saved\n", "pools.yaml": "profilePools:\n  - {name: a}\n"}
    )
    text = saved_plan(service, ws, {})
    (ws / "pools.yaml").write_text("profilePools:\n  - {name: b}\n")
    with pytest.raises(StalePlanError, match="files render otherwise"):
        apply_saved(service, ws, text, {})


def test_an_unchanged_saved_plan_applies_exactly(service: Service, ws: Path) -> None:
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: saved\n",
            "pools.yaml": "profilePools:\n  - {name: a, members: [bot-1, bot-2]}\n",
        },
    )
    text = saved_plan(service, ws, {})
    service.log.reset()
    report = apply_saved(service, ws, text, {})
    assert report.ok
    assert [w[0] for w in service.log.writes()] == ["POST", "POST"]


def test_reads_list_only_the_declared_kinds_and_older_plans_listing_all_still_apply(
    service: Service, ws: Path
) -> None:
    """A kind the files do not declare is left out of `reads` (so a new kind changes
    no saved plan); a plan listing every kind, as earlier releases wrote, applies."""
    service.seed_live({"profilePools": [{"name": "a", "members": ["bot-2"]}]})
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: saved\n",
            "pools.yaml": "profilePools:\n  - {name: a, members: [bot-1]}\n",
        },
    )
    text = saved_plan(service, ws, {})
    data = json.loads(text)
    assert data["reads"] == {"profilePools": ["a"]}
    every_kind = {kind.name: [] for kind in kinds_in_order()} | data["reads"]
    older = json.dumps({**data, "reads": every_kind})
    assert apply_saved(service, ws, older, {}).ok


@pytest.mark.parametrize("text", ["not json", '{"formatVersion": 99}', '{"formatVersion": 1}'])
def test_damaged_plan_files_are_refused(text: str) -> None:
    with pytest.raises(AgentformError):
        load_plan(text)


def test_a_changed_secret_value_shows_as_sensitive_changed(
    service: Service, secret_ws: Path
) -> None:
    from agentform.output.text import TextView

    first = {"TPL_DESC": SECRET}
    text = saved_plan(service, secret_ws, first)
    assert apply_saved(service, secret_ws, text, first).ok
    env = {"TPL_DESC": "a-new-secret-value"}
    workspace = load_workspace(secret_ws, environ=env)
    plan = service.plan(secret_ws, environ=env)
    (change,) = plan.changes
    assert [(f.field, f.sensitive, f.before, f.after) for f in change.changedFields] == [
        ("description", True, None, None)
    ]
    shown = TextView(scrub=workspace.secrets.scrub).plan(plan)
    assert "description: (sensitive, changed)" in shown
    assert SECRET not in shown and "a-new-secret-value" not in shown
    assert SECRET not in dump_plan(plan)


def forged(text: str, edit: Callable[[dict[str, Any]], None]) -> str:
    data = json.loads(text)
    edit(data)
    return json.dumps(data)


@pytest.fixture
def two_pools(ws: Path) -> Path:
    return write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: saved\n",
            "pools.yaml": "profilePools:\n  - {name: a, allowConcurrentUse: true}\n  - {name: b}\n",
        },
    )


def _call_moved(data: dict[str, Any]) -> None:
    data["changes"][0]["calls"][0]["body"]["name"] = "elsewhere"


def _value_changed(data: dict[str, Any]) -> None:
    data["changes"][0]["after"]["allowConcurrentUse"] = False


def _change_added(data: dict[str, Any]) -> None:
    extra = json.loads(json.dumps(data["changes"][0]))
    extra["id"], extra["key"] = "profilePools/c", "c"
    extra["calls"][0]["body"]["name"] = "c"
    data["changes"].append(extra)


def _change_removed(data: dict[str, Any]) -> None:
    del data["changes"][1]


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (_call_moved, "profilePools/a: calls differ (at calls[0].body.name)"),
        (_value_changed, "profilePools/a: after differs (at after.allowConcurrentUse)"),
        (_change_added, "profilePools/c is not a change the files and the service imply"),
        (_change_removed, "profilePools/b is missing from the saved plan"),
    ],
)
def test_an_edited_plan_file_is_refused_before_any_write(
    service: Service, two_pools: Path, edit: Callable[[dict[str, Any]], None], named: str
) -> None:
    """The file is an assertion, not a script: apply makes the plan again and runs
    it only when it is exactly the saved one."""
    text = forged(saved_plan(service, two_pools, {}), edit)
    service.log.reset()
    with pytest.raises(StalePlanError, match=re.escape(named)):
        apply_saved(service, two_pools, text, {})
    assert service.log.writes() == []


def test_a_forged_call_to_another_object_is_refused(service: Service, ws: Path) -> None:
    """show would display the reviewed change while apply sent the forged call."""
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: saved\n",
            "pools.yaml": "profilePools:\n  - {name: a, allowConcurrentUse: true}\n  - {name: b}\n",
        },
    )
    service.seed_live({"profilePools": [{"name": "a"}, {"name": "b"}]})
    text = saved_plan(service, ws, {})

    def retarget(data: dict[str, Any]) -> None:
        (change,) = data["changes"]
        call = change["calls"][0]
        call["path"] = call["path"].rsplit("/", 1)[0] + "/00000000-0000-4000-8000-000000000000"

    service.log.reset()
    with pytest.raises(
        StalePlanError, match=re.escape("profilePools/a: calls differ (at calls[0].path)")
    ):
        apply_saved(service, ws, forged(text, retarget), {})
    assert service.log.writes() == []


def test_a_plan_made_with_an_allowance_applies_with_it(service: Service, ws: Path) -> None:
    """What the person planning allowed travels with the plan: apply makes the plan
    again with the same allowances, not the ones of its own command line."""
    from datetime import UTC, datetime

    from agentform.kinds.context import PlanOptions

    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: saved\n",
            "batches.yaml": "batches:\n  - name: late\n    agent: support-agent\n"
            "    startAt: 2020-01-01T00:00:00Z\n"
            "    config: {type: timeBatching, batchSize: 1, batchInterval: 60}\n"
            "    items: [{inputs: {n: 1}}]\n",
        },
    )
    plan = service.plan(ws, PlanOptions(allow_past_start=True, now=datetime.now(UTC)))
    assert [c.action for c in plan.changes] == ["create"] and plan.allowPastStart
    text = dump_plan(plan)
    assert apply_saved(service, ws, text, {}).ok


def test_an_edited_organization_name_is_refused_before_any_write(
    service: Service, two_pools: Path
) -> None:
    """The name a reviewer read the plan for is the organization's, as every other
    field the file holds is checked or never read."""
    text = forged(saved_plan(service, two_pools, {}), lambda d: d.update(organizationName="prod"))
    service.log.reset()
    with pytest.raises(StalePlanError, match="the plan's organizationName is 'prod', not"):
        apply_saved(service, two_pools, text, {})
    assert service.log.writes() == []


def test_every_field_of_a_plan_file_is_checked_or_never_read() -> None:
    """A field added to Plan is compared by verified_plan unless it is named as never
    read: no field of a saved plan can steer an apply unchecked."""
    from agentform.engine import planfile
    from agentform.engine.model import Plan

    checked = set(Plan.model_fields) - planfile.NOT_READ
    assert checked - planfile._CHECKED_APART == {"formatVersion", "organizationName"}
    assert planfile.NOT_READ.isdisjoint(planfile._CHECKED_APART)


@pytest.mark.parametrize("version", ['"2"', "2.0", "true", "[2]"])
def test_a_format_version_that_is_not_the_number_2_says_so(version: str) -> None:
    with pytest.raises(AgentformError, match="it must be the number 2") as info:
        load_plan('{"formatVersion": ' + version + ', "changes": []}')
    assert "has format" not in str(info.value)


def test_a_stale_plan_names_the_files_that_changed(service: Service, ws: Path) -> None:
    """It said only "the workspace files changed"."""
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: saved\n",
            "pools.yaml": "profilePools:\n  - {name: a}\n",
            "more/extra.yaml": "profilePools:\n  - {name: c}\n",
            "same.yaml": "profilePools:\n  - {name: d}\n",
        },
    )
    text = saved_plan(service, ws, {})
    (ws / "pools.yaml").write_text("profilePools:\n  - {name: b}\n")
    (ws / "more/extra.yaml").unlink()
    (ws / "new.yaml").write_text("profilePools:\n  - {name: e}\n")
    with pytest.raises(StalePlanError) as info:
        apply_saved(service, ws, text, {})
    assert str(info.value) == (
        "plan is stale: the workspace files render otherwise than when the plan was made "
        "(a file, a variable they read or the saved plan changed) "
        "(changed: pools.yaml; added: new.yaml; removed: more/extra.yaml)"
    )


def test_a_plan_whose_environment_was_edited_is_refused_before_any_write(
    service: Service, ws: Path
) -> None:
    """Two environments whose files render alike (one organization, no var files):
    the plan of prod, edited to say staging, would be judged by staging's policies
    and applied with staging's key. Its inputs' digest names the environment."""
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: envs\nenvironments: {staging: {}, prod: {}}\n",
            "pools.yaml": "profilePools:\n  - {name: a}\n",
        },
    )
    text = dump_plan(service.plan(ws, environ={}, environment="prod"))
    edited = forged(text, lambda d: d.update(environment="staging"))
    service.log.reset()
    staging = load_workspace(ws, environ={}, environment="staging")

    async def go(api: ApiClient) -> None:
        await verified_plan(load_plan(edited), staging, api, "test")

    with pytest.raises(StalePlanError, match="made for another environment"):
        service.run(go)
    assert service.log.writes() == []
