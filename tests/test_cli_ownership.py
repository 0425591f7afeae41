"""Many workspaces on one organization, through the command line: `owns` keeps each
workspace's prune to its own objects, `moved` renames in place, `import` brings
a live object under management, `list` shows what a workspace manages, and
`validate --all` refuses two workspaces owning one name."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agentform.cli.main import cli
from agentform.service import DEMO_ADMIN_KEY, create_app
from tests.loopback import serving
from tests.provisioner.harness import write_workspace

ORG = "0b7f3c1e-0000-4000-8000-000000000001"  # the demo organization


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One service on loopback for the module: workspaces in several directories
    share its organization as teams of one repository do."""
    app = create_app(tmp_path_factory.mktemp("service") / "service.db")
    with serving(app) as origin:
        yield f"{origin}/agents/v2"


def team(root: Path, endpoint: str, name: str, pools: list[str], extra: str = "") -> list[str]:
    """A team's workspace owning the pools `<name>-*`, pruning them; its -C args."""
    listed = "".join(f"  - name: {p}\n" for p in pools)
    write_workspace(
        root,
        {
            "agentform.yaml": f"workspace: {name}\nendpoint: {endpoint}\n"
            f"organizationId: {ORG}\nprune: [profilePools]\n"
            f'owns:\n  profilePools: ["{name}-*"]\n{extra}',
            "pools.yaml": f"profilePools:\n{listed}" if pools else "profilePools: []\n",
        },
    )
    return ["-C", str(root)]


KEY = {"AGENTFORM_API_KEY": DEMO_ADMIN_KEY}


def live_pools(ws: list[str]) -> dict[str, str | None]:
    listed = json.loads(run("list", "--format", "json", *ws, env=KEY).output)
    return {o["address"]: o["liveId"] for o in listed["objects"]}


def test_two_workspaces_on_one_organization_each_prune_only_their_own(
    endpoint: str, tmp_path: Path
) -> None:
    a = team(tmp_path / "a", endpoint, "prune-a", ["prune-a-eu", "prune-a-tmp"])
    b = team(tmp_path / "b", endpoint, "prune-b", ["prune-b-eu"])
    assert run("apply", "--auto-approve", *a, env=KEY).exit_code == 0
    assert run("apply", "--auto-approve", *b, env=KEY).exit_code == 0
    # a drops one of its pools: its plan deletes that one, never b's (nor counts them)
    team(tmp_path / "a", endpoint, "prune-a", ["prune-a-eu"])
    plan = run("plan", *a, env=KEY)
    assert "- profilePools/prune-a-tmp  delete: pruned: not declared" in plan.output
    assert "prune-b" not in plan.output
    assert "Plan: 0 to create, 0 to update, 1 to delete." in plan.output
    assert run("apply", "--auto-approve", *a, env=KEY).exit_code == 0
    # b's plan is still empty, and b's pool is live
    again = run("plan", "--detailed-exitcode", *b, env=KEY)
    assert again.exit_code == 0, again.output
    assert live_pools(b)["profilePools/prune-b-eu"] is not None
    assert run("drift", *b, env=KEY).exit_code == 0


def test_a_declared_object_the_workspace_does_not_own_is_an_error_at_its_line(
    endpoint: str, tmp_path: Path
) -> None:
    ws = team(tmp_path / "a", endpoint, "own-a", ["own-a-eu", "own-b-eu"])
    result = run("plan", *ws, env=KEY)
    assert result.exit_code == 1
    assert "pools.yaml:3:5: error: profilePools/own-b-eu is not owned" in result.output


def test_a_moved_pool_is_renamed_in_place_keeping_its_id_and_members(
    endpoint: str, tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    ws = team(root, endpoint, "mv", [])
    (root / "pools.yaml").write_text("profilePools:\n  - {name: mv-old, members: [bot-1, bot-2]}\n")
    assert run("apply", "--auto-approve", *ws, env=KEY).exit_code == 0
    before = live_pools(ws)["profilePools/mv-old"]
    moved = "moved:\n  - {from: profilePools/mv-old, to: profilePools/mv-new}\n"
    team(root, endpoint, "mv", [], extra=moved)
    (root / "pools.yaml").write_text("profilePools:\n  - {name: mv-new, members: [bot-1, bot-2]}\n")
    listed = run("list", *ws, env=KEY).output
    assert "(renamed from profilePools/mv-old at the next apply)" in listed
    saved = tmp_path / "plan.json"
    plan = run("plan", "--out", str(saved), *ws, env=KEY)
    assert "~ profilePools/mv-new  rename: moved from profilePools/mv-old" in plan.output
    assert "Plan: 0 to create, 1 to update (1 to rename), 0 to delete." in plan.output
    assert json.loads(saved.read_text())["changes"][0]["action"] == "rename"
    markdown = run("plan", "--format", "markdown", *ws, env=KEY).output
    assert "~ profilePools/mv-new: rename" in markdown
    applied = run("apply", "--auto-approve", str(saved), *ws, env=KEY)  # the saved plan
    assert applied.exit_code == 0, applied.output
    assert live_pools(ws)["profilePools/mv-new"] == before
    # members kept, the entry may stay: the next plan is empty
    again = run("plan", "--detailed-exitcode", *ws, env=KEY)
    assert again.exit_code == 0, again.output


def test_import_writes_the_object_and_the_next_plan_is_empty(endpoint: str, tmp_path: Path) -> None:
    maker = team(tmp_path / "maker", endpoint, "imp", ["imp-eu"])
    assert run("apply", "--auto-approve", *maker, env=KEY).exit_code == 0
    root = tmp_path / "ws"
    ws = team(root, endpoint, "imp", ["imp-other"])
    wrong = run("import", "profilePools/imp-ue", *ws, env=KEY)
    assert wrong.exit_code == 1 and "did you mean 'imp-eu'?" in wrong.output
    assert not (root / "imported.yaml").exists()
    (root / "imported.yaml").write_text("# mine\n")
    refused = run("import", "profilePools/imp-eu", *ws, env=KEY)
    assert refused.exit_code == 1 and "never replaces one" in refused.output
    assert (root / "imported.yaml").read_text() == "# mine\n"
    out = root / "more" / "pools-imported.yaml"
    out.parent.mkdir()
    done = run("import", "profilePools/imp-eu", "--out", str(out), *ws, env=KEY)
    assert done.exit_code == 0, done.output
    assert "name: imp-eu" in out.read_text()
    plan = run("plan", *ws, env=KEY)
    assert "imp-eu" not in plan.output  # managed now, and as it is live
    assert "profilePools/imp-other  create" in plan.output
    listed = live_pools(ws)
    assert listed["profilePools/imp-other"] is None and listed["profilePools/imp-eu"]
    again = run("import", "profilePools/imp-eu", "--out", str(root / "x.yaml"), *ws, env=KEY)
    assert again.exit_code == 1 and "declared in the files already" in again.output
    assert not (root / "x.yaml").exists()


def test_import_out_of_the_workspace_names_the_path_that_is_in_it(
    endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`-C ws import ... --out hooks.yaml` reads --out from the current directory, as
    every --out does: refused as outside, the message gives the path that is inside."""
    ws = team(tmp_path / "ws", endpoint, "rel", [])
    monkeypatch.chdir(tmp_path)
    refused = run("import", "profilePools/rel-x", "--out", "hooks.yaml", *ws, env=KEY)
    assert refused.exit_code == 1
    assert "is outside the workspace" in refused.output
    assert "--out is read from the current directory: --out ws/hooks.yaml" in refused.output
    assert not (tmp_path / "hooks.yaml").exists()


def test_validate_all_refuses_two_workspaces_owning_one_name(tmp_path: Path) -> None:
    url = "https://agents.example.com/agents/v2"
    team(tmp_path / "teams" / "a", url, "ov-a", [])
    team(tmp_path / "teams" / "b", url, "ov-b", [])
    write_workspace(tmp_path / "node_modules" / "x", {"agentform.yaml": "workspace: junk\n"})
    write_workspace(tmp_path / ".venv" / "x", {"agentform.yaml": "bad: [\n"})
    ok = run("validate", "--all", str(tmp_path))
    assert ok.exit_code == 0, ok.output
    assert "Valid: 2 workspaces" in ok.output
    # b grows its owns into a's names: refused
    root = tmp_path / "teams" / "b" / "agentform.yaml"
    root.write_text(root.read_text().replace('["ov-b-*"]', '["ov-*"]'))
    refused = run("validate", "--all", str(tmp_path))
    assert refused.exit_code == 1
    assert "both own names" in refused.output and "'ov-a-*' and 'ov-*'" in refused.output


def test_import_into_a_file_every_environment_reads_says_which_will_create_it(
    endpoint: str, tmp_path: Path
) -> None:
    """It said "`agentform plan` shows no change for them" of every environment,
    while prod's plan would now create what staging imported."""
    maker = team(tmp_path / "maker", endpoint, "envimp", ["envimp-eu"])
    assert run("apply", "--auto-approve", *maker, env=KEY).exit_code == 0
    environments = "environments:\n  staging: {}\n  prod: {}\n  dev: {}\n"
    ws = team(tmp_path / "ws", endpoint, "envimp", [], extra=environments)
    done = run("import", "--env", "staging", "profilePools/envimp-eu", *ws, env=KEY)
    assert done.exit_code == 0, done.output
    assert done.output.splitlines()[0].endswith(
        "imported.yaml; `agentform plan --env staging` shows no change for them. "
        "Every environment reads the file: in dev and prod, plan creates them "
        "where they do not exist"
    )
