"""Bad input gets a clear error and the service sees no write (and, for problems
in the files, no request at all)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentform.api.client import ApiClient
from agentform.core.errors import AgentformError, DiagnosticsError, ReadError
from tests.provisioner.harness import Service, write_workspace

ROOT = "workspace: bad\n"


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"pools.yaml": "profilePools:\n  - name: a\n    members: [bot-1\n"},
            "pools.yaml:4:1: error: invalid YAML",
        ),
        (
            {"pools.yaml": "profilePools:\n  - name: a\n    colour: red\n"},
            "pools.yaml:3:5: error: profilePools.0.colour: unknown key",
        ),
        (
            {"pools.yaml": "profilePools:\n  - name: a\n    memebrs: []\n"},
            "did you mean 'members'?",
        ),
        (
            {"pools.yaml": "profilePools:\n  - name: \"{{ env('AGENTFORM_VAR_TEST_UNSET') }}\"\n"},
            "pools.yaml:2:15: error: environment variable AGENTFORM_VAR_TEST_UNSET is not set",
        ),
        (
            {"pools.yaml": 'profilePools:\n  - name: "{{ vars.nope }}"\n'},
            "pools.yaml:2:1: error: template error:",
        ),
        (
            {"a.yaml": "profilePools: [{name: x}]\n", "b.yaml": "profilePools: [{name: x}]\n"},
            "b.yaml:1:16: error: profilePools: 'x' is declared twice (first at a.yaml:1:16)",
        ),
        ({"pools.yaml": "profilePools:\n  - name: a\n  - name: a\n"}, "declared twice"),
        ({"pools.yaml": "profilePools: {name: a}\n"}, "pools.yaml:1:15: error: profilePools"),
        ({"pools.yaml": "prune: [profilePools]\n"}, "'prune' is a workspace setting"),
        (
            {"pools.yaml": "profilePools:\n  - name: a\n  - name: a\n    name: b\n"},
            "pools.yaml:4:5: error: duplicate key 'name'",
        ),
    ],
)
def test_file_problems_are_reported_and_nothing_is_called(
    service: Service, ws: Path, files: dict[str, str], expected: str
) -> None:
    write_workspace(ws, {"agentform.yaml": ROOT, **files})
    with pytest.raises(DiagnosticsError) as info:
        service.plan(ws)
    assert expected in str(info.value)
    assert service.log.calls == []


def test_all_problems_of_all_files_at_once(service: Service, ws: Path) -> None:
    write_workspace(
        ws,
        {
            "agentform.yaml": ROOT + "prune: [profilePool]\n",
            "a.yaml": "profilePools:\n  - name: a\n    colour: red\n",
            "b.yaml": "profileGroups:\n  - name: '{{ env(\"AGENTFORM_VAR_TEST_UNSET_1\") }}'\n"
            "  - name: '{{ env(\"AGENTFORM_VAR_TEST_UNSET_2\") }}'\n",
            "c.yaml": "vaultTemplates: [\n",
        },
    )
    with pytest.raises(DiagnosticsError) as info:
        service.plan(ws)
    text = str(info.value)
    assert len(info.value.diagnostics) == 5, text
    for part in ("agentform.yaml:2:9", "a.yaml:3:5", "b.yaml:2:1", "b.yaml:3:1", "c.yaml:2:1"):
        assert part in text
    assert "did you mean 'profilePools'?" in text


def test_secret_and_env_without_a_name_are_clean_errors_that_hide_nothing(
    service: Service, ws: Path
) -> None:
    write_workspace(
        ws,
        {
            "agentform.yaml": ROOT,
            "pools.yaml": 'profilePools:\n  - name: "p{{ secret() }}"\n'
            "  - name: \"{{ env('AGENTFORM_VAR_TEST_UNSET') }}\"\n"
            '  - name: "{{ env() }}"\n',
        },
    )
    with pytest.raises(DiagnosticsError) as info:
        service.plan(ws)
    text = str(info.value)
    assert "pools.yaml:2:16: error: secret() needs the variable's name: secret('NAME')" in text
    assert (
        "pools.yaml:3:15: error: environment variable AGENTFORM_VAR_TEST_UNSET is not set" in text
    )
    assert "pools.yaml:4:15: error: env() needs the variable's name: env('NAME')" in text
    assert "Renderer" not in text and "positional" not in text
    assert service.log.calls == []


def test_a_list_item_that_is_not_a_mapping_names_no_internal_class(
    service: Service, ws: Path
) -> None:
    write_workspace(ws, {"agentform.yaml": ROOT, "groups.yaml": "profileGroups:\n  - eu\n"})
    with pytest.raises(DiagnosticsError) as info:
        service.plan(ws)
    text = str(info.value)
    assert "groups.yaml:2:5: error: profileGroups.0: should be a mapping" in text, text
    assert "Desired" not in text and "instance of" not in text


@pytest.mark.parametrize(
    ("declared", "expected"),
    [
        (
            "ensure: absent",
            "is declared absent but is a preset of the service: presets are never deleted",
        ),
        ("description: x", "creating it needs 'kind' and 'fields' (a preset of that name exists"),
    ],
    ids=["absent", "partial"],
)
def test_a_preset_is_never_deleted_or_changed(
    service: Service, ws: Path, declared: str, expected: str
) -> None:
    """Presets (origin generated) are never managed: declaring one absent is refused,
    as declaring a protected object absent is (not a silent no-op); a partial
    declaration of its name says it is not the preset that would change."""
    vault = f"vaultTemplates:\n  - {{name: API key, {declared}}}\n"
    write_workspace(ws, {"agentform.yaml": ROOT, "vault.yaml": vault})
    with pytest.raises(DiagnosticsError) as info:
        service.plan(ws)
    text = str(info.value)
    assert "vault.yaml:2:5: error: " in text and expected in text, text
    assert service.log.writes() == []


def test_missing_agentform_yaml(service: Service, tmp_path: Path) -> None:
    with pytest.raises(DiagnosticsError, match=r"no agentform\.yaml"):
        service.plan(tmp_path)


def test_unknown_profile_name_fails_before_any_write(service: Service, ws: Path) -> None:
    write_workspace(
        ws,
        {
            "agentform.yaml": ROOT,
            "pools.yaml": "profilePools:\n  - {name: good}\n  - {name: bad, members: [ghost]}\n",
        },
    )
    with pytest.raises(DiagnosticsError, match="no profile named 'ghost'"):
        service.apply(ws)
    assert service.log.writes() == []


@pytest.mark.parametrize("status", [500, 404])
def test_a_failing_page_read_aborts_the_plan(service: Service, ws: Path, status: int) -> None:
    names = "\n".join(f"  - {{name: p{i}}}" for i in range(150))
    write_workspace(ws, {"agentform.yaml": ROOT, "pools.yaml": f"profilePools:\n{names}\n"})
    assert service.apply(ws).ok
    (ws / "pools.yaml").write_text(f"profilePools:\n{names}\n  - {{name: new}}\n")
    service.log.reset()
    # every read of the pools list after its first page fails
    service.log.fail = lambda m, p: (
        status if (m, p) == ("GET", "/agent-profile-pools") and _page2(service) else None
    )
    with pytest.raises(AgentformError) as info:
        service.apply(ws)
    assert "/agent-profile-pools" in str(info.value)
    assert service.log.writes() == []


def _page2(service: Service) -> bool:
    return sum(1 for m, p in service.log.calls if p == "/agent-profile-pools") > 1


def test_a_list_that_changes_during_the_read_is_refused(service: Service, ws: Path) -> None:
    write_workspace(ws, {"agentform.yaml": ROOT, "pools.yaml": "profilePools: []\n"})

    async def go(api: ApiClient) -> Any:
        for i in range(120):
            await api.request("POST", "/agent-profile-pools", json={"name": f"p{i}"})
        original = api.request

        async def racing(method: str, path: str, **kw: Any) -> Any:
            answer = await original(method, path, **kw)
            if path == "/agent-profile-pools" and (kw.get("params") or {}).get("page") == 1:
                await original("DELETE", f"/agent-profile-pools/{answer['items'][0]['id']}")
            return answer

        api.request = racing  # type: ignore[method-assign]
        return await api.list_all("/agent-profile-pools")

    with pytest.raises(ReadError, match="changed while it was read"):
        service.run(go)


def test_two_live_objects_with_one_name_stop_the_plan(ws: Path) -> None:
    """The service keeps names unique, but a plan must not guess if a server does not."""
    import asyncio

    from agentform.config.loader import load_workspace
    from agentform.engine.planner import read_live

    class DuplicatingApi:
        async def request(self, method: str, path: str, **_: object) -> dict[str, str]:
            return {"organizationId": "o", "organizationName": "o"}

        async def list_all(self, path: str, params: object = None) -> list[dict[str, object]]:
            if path != "/agent-profile-pools":
                return []
            return [
                {
                    "id": i,
                    "name": "twin",
                    "selectionStrategy": "least_recently_used",
                    "allowConcurrentUse": False,
                }
                for i in ("id-1", "id-2")
            ]

        async def list_and_read(self, path: str, wanted: object, read: object) -> object:
            items = await self.list_all(path)
            return items, {i["id"]: await read(i) for i in items if wanted(i)}  # type: ignore[operator]

    write_workspace(ws, {"agentform.yaml": ROOT})
    with pytest.raises(ReadError, match="two live objects have the key 'twin'"):
        asyncio.run(read_live(load_workspace(ws), DuplicatingApi()))


def test_a_var_file_that_is_not_yaml_is_one_problem_at_its_line(tmp_path: Path) -> None:
    """As a workspace file's YAML error is: the place and PyYAML's problem, not its
    several lines of context."""
    from agentform.config.loader import load_workspace

    root = write_workspace(tmp_path / "ws", {"agentform.yaml": "workspace: w\n"})
    bad = tmp_path / "bad.vars"
    bad.write_text("region: us\nzones: [a,\n")
    with pytest.raises(DiagnosticsError) as caught:
        load_workspace(root, var_files=[bad])
    (problem,) = caught.value.diagnostics
    assert str(problem.position) == f"{bad}:3:1"
    assert problem.summary.startswith("invalid YAML in var file: expected ")
    assert "\n" not in problem.summary


@pytest.mark.parametrize(
    "root",
    [
        "workspace: bad\nvars: {region: eu\n",  # not YAML
        "workspace: bad\nvars: [region]\n",  # vars not a mapping
        "workspace: bad\nvars: {region: !!python/object x}\n",  # a tag YAML refuses
        "workspace: bad\nvarz: {region: eu}\n",  # a key agentform.yaml has not: maybe vars
    ],
)
def test_a_broken_agentform_yaml_is_said_without_false_variables_not_set(
    ws: Path, root: str
) -> None:
    """The other files render without agentform.yaml's vars: a name they use may be
    one of them, so it is not said as unset; their other problems still are."""
    from agentform.config.loader import load_workspace

    write_workspace(
        ws,
        {
            "agentform.yaml": root,
            "pools.yaml": 'profilePools:\n  - name: "{{ vars.region }}-{{ vars.other }}"\n',
            "groups.yaml": "profileGroups:\n  - name: a\n    colour: red\n",
        },
    )
    with pytest.raises(DiagnosticsError) as info:
        load_workspace(ws)
    said = [d.render() for d in info.value.diagnostics]
    assert said[0].startswith("agentform.yaml:2:") or said[0].startswith("agentform.yaml:3:"), said
    assert not [s for s in said if "not set" in s], said
    assert [s for s in said if s.startswith("groups.yaml:3:5: error: profileGroups.0.colour")]


def test_an_extension_key_in_agentform_yaml_leaves_an_unset_variable_said(ws: Path) -> None:
    from agentform.config.loader import load_workspace

    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: ok\nx-defaults: {a: 1}\nvars: {region: eu}\n",
            "pools.yaml": 'profilePools:\n  - name: "{{ vars.region }}-{{ vars.other }}"\n',
        },
    )
    with pytest.raises(DiagnosticsError) as info:
        load_workspace(ws)
    said = [d.render() for d in info.value.diagnostics]
    assert [s for s in said if "variable 'other' is not set" in s], said
