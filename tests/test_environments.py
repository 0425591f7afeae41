"""Environments (`environments:` of agentform.yaml, `--env`), through the command line
on the embedded service: settings and variables per environment, the refusals, saved
plans that carry their environment, and `env list` / `env diff`."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agentform.cli.endpoint import local_state
from agentform.cli.main import cli
from agentform.config.loader import load_workspace
from agentform.core.errors import AgentformError, DiagnosticsError
from agentform.service import create_app, read_seed
from tests.markdown_check import structure

EXAMPLE = Path(__file__).parents[1] / "examples" / "environments"
STAGING_KEY = {"STAGING_AGENTFORM_API_KEY": "staging-admin-key"}
PROD_KEY = {"PROD_AGENTFORM_API_KEY": "prod-admin-key"}
NO_KEYS: dict[str, str | None] = {
    "STAGING_AGENTFORM_API_KEY": None,
    "PROD_AGENTFORM_API_KEY": None,
    "AGENTFORM_API_KEY": None,
    "AGENTFORM_ENV": None,
}


def run(ws: Path, *args: str, env: Mapping[str, str | None] | None = None) -> Result:
    """agentform in `ws`, on the embedded service (the example names a URL)."""
    environ = {**NO_KEYS, "AGENTFORM_ENDPOINT": "local", **(env or {})}
    return CliRunner().invoke(cli, ["-C", str(ws), *args], env=environ, catch_exceptions=False)


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """A copy of examples/environments, each environment's local service seeded with
    both organizations (the example names one server holding both)."""
    root = tmp_path / "environments"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".agentform"))
    for environment in ("staging", "prod"):
        create_app(local_state(root, environment), seed=read_seed(root / "seed.yaml"))
    return root


def test_the_example_end_to_end(example: Path, tmp_path: Path) -> None:
    staging = run(example, "apply", "--env", "staging", "--auto-approve", env=STAGING_KEY)
    assert staging.exit_code == 0, staging.output
    assert "Apply: 5 succeeded" in staging.output
    assert "(environment staging)" in staging.output  # the plan shown before applying

    plan_file = tmp_path / "prod.plan.json"
    planned = run(example, "plan", "--env", "prod", "--out", str(plan_file), env=PROD_KEY)
    assert planned.exit_code == 0, planned.output
    assert "Workspace support (environment prod)" in planned.output
    assert "acme-prod" in planned.output
    saved = json.loads(plan_file.read_text())
    assert saved["environment"] == "prod" and saved["vars"]["pool_size"] == 3
    applied = run(example, "apply", str(plan_file), env=PROD_KEY)  # no --env, no var file
    assert applied.exit_code == 0, applied.output
    assert "Apply: 5 succeeded" in applied.output
    for name in ("staging", "prod"):
        key = STAGING_KEY if name == "staging" else PROD_KEY
        again = run(example, "plan", "--env", name, "--detailed-exitcode", env=key)
        assert again.exit_code == 0 and "No changes." in again.output, again.output


def test_each_environment_of_a_local_workspace_has_its_own_state(tmp_path: Path) -> None:
    """`endpoint: local` without organizationIds: staging's objects are not prod's,
    so prod's plan creates its own and wants nothing of staging's."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "agentform.yaml").write_text(
        "workspace: payments\nendpoint: local\nenvironments:\n"
        "  staging: {vars: {n: staging}}\n  prod: {vars: {n: prod}}\n"
    )
    (ws / "pools.yaml").write_text(
        "profilePools:\n  - {name: shared-pool, members: [bot-1]}\n"
        "  - {name: '{{ vars.n }}-pool', members: [bot-1]}\n"
    )
    local = {"AGENTFORM_ENDPOINT": None}
    staging = run(ws, "apply", "--env", "staging", "--auto-approve", env=local)
    assert staging.exit_code == 0, staging.output
    prod = run(ws, "plan", "--env", "prod", "--detailed-exitcode", env=local)
    assert prod.exit_code == 2, prod.output
    assert "Plan: 2 to create, 0 to update, 0 to delete" in prod.output, prod.output
    assert "staging-pool" not in prod.output
    assert (ws / ".agentform" / "staging" / "service.db").is_file()
    assert (ws / ".agentform" / "prod" / "service.db").is_file()
    assert not (ws / ".agentform" / "service.db").exists()


@pytest.mark.parametrize("name", ["..", ".hidden", "a/b", "", "x" * 64])
def test_a_local_state_is_only_ever_one_segment_under_agentform(tmp_path: Path, name: str) -> None:
    assert local_state(tmp_path, None) == tmp_path / ".agentform" / "service.db"
    assert local_state(tmp_path, "prod.eu-1") == tmp_path / ".agentform/prod.eu-1/service.db"
    with pytest.raises(AgentformError, match="is not an environment's name"):
        local_state(tmp_path, name)


def test_the_wrong_key_for_an_environment_is_refused(example: Path) -> None:
    wrong = run(
        example, "plan", "--env", "prod", env={"PROD_AGENTFORM_API_KEY": "staging-admin-key"}
    )
    assert wrong.exit_code == 1
    assert "the API key belongs to organization acme-staging" in wrong.output
    assert "environments.prod.organizationId" in wrong.output
    assert "staging-admin-key" not in wrong.output
    # AGENTFORM_API_KEY is not prod's key variable: it is not read for prod
    other = run(
        example, "plan", "--env", "prod", "--endpoint", "http://127.0.0.1:9/agents/v2",
        env={"AGENTFORM_API_KEY": "prod-admin-key", "AGENTFORM_ENDPOINT": None},
    )  # fmt: skip
    assert other.exit_code == 1
    assert "no API key for environment prod: set PROD_AGENTFORM_API_KEY" in other.output


def test_a_saved_plan_is_applied_only_in_its_environment(example: Path, tmp_path: Path) -> None:
    plan_file = tmp_path / "prod.plan.json"
    assert (
        run(example, "plan", "--env", "prod", "--out", str(plan_file), env=PROD_KEY).exit_code == 0
    )
    other = run(example, "apply", str(plan_file), "--env", "staging", env=STAGING_KEY)
    assert other.exit_code == 1
    assert "the plan is for environment prod, not environment staging" in other.output
    from_env = run(example, "apply", str(plan_file), env={**PROD_KEY, "AGENTFORM_ENV": "staging"})
    assert from_env.exit_code == 1 and "not environment staging" in from_env.output
    with_vars = run(example, "apply", str(plan_file), "--var", "pool_size=1", env=PROD_KEY)
    assert with_vars.exit_code == 1 and "applied with the variables it was made with" in (
        with_vars.output
    )
    same = run(example, "apply", str(plan_file), "--env", "prod", env=PROD_KEY)
    assert same.exit_code == 0, same.output


def test_a_plan_file_cannot_steer_the_variables(example: Path, tmp_path: Path) -> None:
    plan_file = tmp_path / "prod.plan.json"
    assert (
        run(example, "plan", "--env", "prod", "--out", str(plan_file), env=PROD_KEY).exit_code == 0
    )
    data = json.loads(plan_file.read_text())
    data["vars"]["pool_size"] = 1  # what the files give prod is 3
    plan_file.write_text(json.dumps(data))
    refused = run(example, "apply", str(plan_file), env=PROD_KEY)
    assert refused.exit_code == 1
    assert "variable pool_size is not what the files give now" in refused.output
    data["vars"]["pool_size"] = 3
    data["varOverrides"] = {"pool_size": 1}  # an override the plan was not made with
    plan_file.write_text(json.dumps(data))
    assert run(example, "apply", str(plan_file), env=PROD_KEY).exit_code == 1
    data["vars"]["pool_size"] = 1  # edited alike: the variables agree, the inputs do not
    plan_file.write_text(json.dumps(data))
    overridden = run(example, "apply", str(plan_file), env=PROD_KEY)
    assert overridden.exit_code == 1
    # the files did not change: the reason said names the plan's variables and an edit too
    assert "a variable they read or the saved plan changed" in overridden.output
    assert "(changed: pools.yaml)" in overridden.output
    data["varOverrides"] = {"x" * 10: "y" * (2 << 20)}  # bounded
    plan_file.write_text(json.dumps(data))
    damaged = run(example, "apply", str(plan_file), env=PROD_KEY)
    assert damaged.exit_code == 1 and "the plan file is damaged" in damaged.output
    assert "Apply:" not in damaged.output


def test_command_line_variables_go_with_the_saved_plan(example: Path, tmp_path: Path) -> None:
    var_file = tmp_path / "bigger.yaml"
    var_file.write_text("pool_size: 2\n")
    plan_file = tmp_path / "prod.plan.json"
    made = run(
        example, "plan", "--env", "prod", "--var-file", str(var_file), "--var", "team=help",
        "--out", str(plan_file), env=PROD_KEY,
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert "profilePools/help-pool" in made.output
    var_file.unlink()  # gone, as it is in the job that applies
    applied = run(example, "apply", str(plan_file), env=PROD_KEY)
    assert applied.exit_code == 0, applied.output
    var_file.write_text("pool_size: 2\n")
    shown = run(
        example, "plan", "--env", "prod", "--var-file", str(var_file), "--var", "team=help",
        env=PROD_KEY,
    )  # fmt: skip
    assert "No changes." in shown.output, shown.output


def test_commands_that_call_the_service_need_an_environment(example: Path) -> None:
    for command in (["plan"], ["apply", "--auto-approve"], ["drift"], ["export"]):
        refused = run(example, *command, env=STAGING_KEY)
        assert refused.exit_code == 1, command
        assert "declares environments (staging, prod): choose one with --env NAME" in (
            refused.output
        )
    typo = run(example, "plan", "--env", "prdo", env=PROD_KEY)
    assert typo.exit_code == 1
    assert "no environment 'prdo' in agentform.yaml (environments: staging, prod)" in typo.output
    assert "did you mean 'prod'" in typo.output
    chosen = run(example, "plan", env={**PROD_KEY, "AGENTFORM_ENV": "prod"})
    assert chosen.exit_code == 0 and "(environment prod)" in chosen.output


def test_env_without_environments_is_refused(quickstart: Path) -> None:
    result = run(quickstart, "plan", "--env", "prod")
    assert result.exit_code == 1
    said = "declares no environments, but environment 'prod' was chosen (--env or AGENTFORM_ENV)"
    assert said in result.output
    from_variable = run(quickstart, "plan", env={"AGENTFORM_ENV": "prod"})
    assert from_variable.exit_code == 1 and said in from_variable.output


def test_validate_checks_every_environment(example: Path) -> None:
    valid = run(example, "validate")
    assert valid.exit_code == 0, valid.output
    assert "environment staging" in valid.output and "environment prod" in valid.output
    (example / "env" / "prod.yaml").write_text("alerts_url: http://127.0.0.1:8787/prod\n")
    broken = run(example, "validate")  # prod's pool_size falls back to the workspace's
    assert broken.exit_code == 0, broken.output
    (example / "pools.yaml").write_text(
        (example / "pools.yaml").read_text().replace("{{ vars.team }}-pool", "{{ vars.owner }}")
    )
    (example / "env" / "prod.yaml").write_text("pool_size: 3\n")  # prod's alerts_url is gone
    failed = run(example, "validate")
    assert failed.exit_code == 1
    # a problem of every environment is said once; one of prod only names prod
    assert failed.output.count("variable 'owner' is not set") == 1, failed.output
    assert "pools.yaml:3:1: error: template error: variable 'owner'" in failed.output
    assert "webhooks.yaml:3:1: error: environment prod: template error: variable 'alerts_url' " in (
        failed.output
    )
    assert "environment staging" not in failed.output
    one = run(example, "validate", "--env", "prod")
    assert one.exit_code == 1 and "environment staging" not in one.output


def test_variables_merge_in_their_order(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "agentform.yaml").write_text(
        "workspace: w\nvars: {a: ws, b: ws, c: ws, d: ws, e: ws}\n"
        "environments:\n  one:\n    vars: {b: env, c: env, d: env, e: env}\n"
        "    varFiles: [one.vars.yaml]\n  two:\n    varFiles: [two.vars.yaml]\n"
    )
    (root / "one.vars.yaml").write_text("c: envfile\nd: envfile\ne: envfile\n")
    (root / "two.vars.yaml").write_text("a: not read for one\n")
    cli_file = tmp_path / "cli.yaml"
    cli_file.write_text("d: varfile\ne: varfile\n")
    loaded = load_workspace(root, {"e": "var"}, [cli_file], environment="one")
    assert loaded.variables == {"a": "ws", "b": "env", "c": "envfile", "d": "varfile", "e": "var"}
    assert loaded.var_overrides == {"d": "varfile", "e": "var"}
    assert loaded.files == ["agentform.yaml"]  # no environment's var file is a workspace file
    assert load_workspace(root, environment="two").variables["a"] == "not read for one"


def test_environment_settings_override_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "agentform.yaml").write_text(
        "workspace: w\nendpoint: https://a.example/agents/v2\nprune: [profileGroups]\n"
        "environments:\n  prod:\n    endpoint: https://b.example/agents/v2\n"
        "    organizationId: 5a1e0000-0000-4000-8000-00000000000b\n"
        "    apiKeyEnv: PROD_KEY\n    prune: []\n    protect: {profilePools: ['*']}\n"
        "  staging: {}\n"
    )
    prod = load_workspace(tmp_path, environment="prod").settings
    assert (prod.endpoint, prod.organization_id, prod.api_key_env) == (
        "https://b.example/agents/v2",
        "5a1e0000-0000-4000-8000-00000000000b",
        "PROD_KEY",
    )
    assert prod.prune == [] and prod.protect == {"profilePools": ["*"]}
    staging = load_workspace(tmp_path, environment="staging").settings
    assert staging.endpoint == "https://a.example/agents/v2" and staging.prune == ["profileGroups"]
    assert staging.api_key_env == "AGENTFORM_API_KEY"


def test_environments_are_checked_where_written(tmp_path: Path) -> None:
    (tmp_path / "agentform.yaml").write_text(
        "workspace: w\nenvironments:\n  prod:\n    endpiont: x\n    apiKeyEnv: 'no spaces'\n"
        "    varFiles: [../outside.yaml]\n"
    )
    (tmp_path.parent / "outside.yaml").write_text("a: 1\n")
    with pytest.raises(DiagnosticsError) as caught:
        load_workspace(tmp_path, environment="prod")
    shown = "\n".join(d.render() for d in caught.value.diagnostics)
    assert "'../outside.yaml' leads outside the workspace" in shown
    assert "agentform.yaml:4:5: error: environments.prod.endpiont: unknown key" in shown
    assert "did you mean 'endpoint'" in shown
    assert "agentform.yaml:5:16: error: environments.prod.apiKeyEnv" in shown
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "agentform.yaml").write_text("workspace: plain\n")
    with pytest.raises(AgentformError, match="declares no environments"):
        load_workspace(plain, environment="prod")


def test_a_broken_var_file_of_an_environment_is_named_from_the_workspace(
    example: Path,
) -> None:
    """An environment's var file is inside the workspace: its problem is named as the
    workspace's files are (`env/prod.yaml:2:1`), not by an absolute path."""
    (example / "env" / "prod.yaml").write_text("pool_size: [3\n")
    result = run(example, "validate", "--env", "prod")
    assert result.exit_code == 1
    assert "\nenv/prod.yaml:2:1: error: invalid YAML in var file:" in f"\n{result.output}"
    (example / "env" / "prod.yaml").write_text("- 3\n")
    result = run(example, "validate", "--env", "prod")
    assert "\nenv/prod.yaml: error: a var file must be a mapping" in f"\n{result.output}"


def test_templates_cannot_read_an_environments_key(tmp_path: Path) -> None:
    (tmp_path / "agentform.yaml").write_text(
        "workspace: w\nenvironments:\n  prod: {apiKeyEnv: PROD_KEY}\n"
    )
    (tmp_path / "v.yaml").write_text(
        "vaultTemplates:\n  - name: t\n    kind: login\n"
        "    description: \"{{ secret('PROD_KEY') }}\"\n"
        "    fields: [{type: username, label: U, required: true}]\n"
    )
    with pytest.raises(DiagnosticsError, match="PROD_KEY holds agentform's API key"):
        load_workspace(tmp_path, environ={"PROD_KEY": "k" * 20}, environment="prod")


def test_outputs_name_the_environment(example: Path) -> None:
    markdown = run(example, "plan", "--env", "staging", "--format", "markdown", env=STAGING_KEY)
    assert "<!-- agentform:plan workspace=support environment=staging -->" in markdown.output
    assert "### agentform plan: workspace `support`, environment `staging`" in markdown.output
    as_json = run(example, "plan", "--env", "staging", "--format", "json", env=STAGING_KEY)
    assert json.loads(as_json.output)["environment"] == "staging"
    drift = run(example, "drift", "--env", "staging", "--format", "json", env=STAGING_KEY)
    assert json.loads(drift.output)["environment"] == "staging"
    text = run(example, "drift", "--env", "staging", env=STAGING_KEY)
    assert text.output.startswith("Workspace support (environment staging) on local")
    report = run(
        example, "apply", "--env", "staging", "--auto-approve", "--format", "json",
        env=STAGING_KEY,
    )  # fmt: skip
    assert json.loads(report.stdout)["environment"] == "staging"


def test_env_list(example: Path) -> None:
    text = run(example, "env", "list")
    assert text.exit_code == 0
    assert text.output.splitlines()[0].startswith("staging: http://127.0.0.1:8700/agents/v2")
    assert "key from $PROD_AGENTFORM_API_KEY, var files env/prod.yaml" in text.output
    listed = json.loads(run(example, "env", "list", "--format", "json").output)
    assert [e["name"] for e in listed["environments"]] == ["staging", "prod"]
    assert listed["environments"][1]["organizationId"] == "5a1e0000-0000-4000-8000-00000000000b"


def test_env_diff_promotes_a_change(example: Path) -> None:
    same = run(example, "env", "diff", "staging", "prod")
    assert same.exit_code == 0, same.output  # only variables differ: the pool, the url
    assert "prod gets the same changes as staging" in same.output
    assert "pool_size: 1 → 3" in same.output
    vault = example / "vault.yaml"
    original = vault.read_text()
    vault.write_text(
        original.replace(
            "    steps:",
            "{% if env_name == 'staging' %}\n"
            "      - {type: totp_seed, label: TOTP seed, required: false}\n"
            "{% endif %}\n    steps:",
        )
    )
    tried = run(example, "apply", "--env", "staging", "--auto-approve", env=STAGING_KEY)
    assert tried.exit_code == 0, tried.output
    flagged = run(example, "env", "diff", "staging", "prod")
    assert flagged.exit_code == 2
    assert "! vaultTemplates/Helpdesk login: differs by the environment's name" in flagged.output
    as_json = json.loads(run(example, "env", "diff", "staging", "prod", "--format", "json").output)
    assert as_json["expected"] is False
    assert [o["id"] for o in as_json["objects"] if o["status"] == "name"] == [
        "vaultTemplates/Helpdesk login"
    ]
    vault.write_text(original.replace(
        "    steps:", "      - {type: totp_seed, label: TOTP seed, required: false}\n    steps:"
    ))  # fmt: skip  # promoted: the condition is gone
    promoted = run(example, "env", "diff", "staging", "prod")
    assert promoted.exit_code == 0, promoted.output
    prod = run(example, "plan", "--env", "prod", env=PROD_KEY)
    assert "+ vaultTemplates/Helpdesk login" in prod.output  # prod has nothing applied yet
    staging = run(example, "plan", "--env", "staging", "--detailed-exitcode", env=STAGING_KEY)
    assert staging.exit_code == 0, staging.output  # staging had it already


def test_env_diff_is_offline_and_refuses_unknown_names(example: Path) -> None:
    typo = run(example, "env", "diff", "staging", "prd")
    assert typo.exit_code == 1 and "did you mean 'prod'" in typo.output
    endpoint = run(example, "env", "diff", "staging", "prod", "--endpoint", "local")
    assert endpoint.exit_code == 1 and "env diff works offline" in endpoint.output


def test_env_diff_markdown_fits_a_comment(example: Path) -> None:
    many = "\n".join(
        f"  - {{name: 'g{i}-{{{{ env_name }}}}', members: [bot-1]}}" for i in range(3000)
    )
    (example / "groups.yaml").write_text(f"profileGroups:\n{many}\n")
    result = run(example, "env", "diff", "staging", "prod", "--format", "markdown")
    assert result.exit_code == 2
    assert len(result.output) <= 65_536
    assert "<!-- agentform:env-diff workspace=support -->" in result.output
    assert "were left out" in result.output and "agentform env diff staging prod" in result.output


def test_env_diff_markdown_keeps_a_pipe_in_a_variable_inside_its_cell(example: Path) -> None:
    """A `|` in a variable's value is escaped in the variables table: unescaped, even
    inside a code span, GitHub ends the cell there and the rest of the value is lost."""
    staging = example / "env" / "staging.yaml"
    staging.write_text(staging.read_text().replace("/staging", "/st|ag`ing"))
    result = run(example, "env", "diff", "staging", "prod", "--format", "markdown")
    assert result.exit_code == 0, result.output
    table = structure(result.output).tables[0]
    assert table[2][1] == '``"http://127.0.0.1:8787/st|ag`ing"``', table
    assert table[2][2] == '`"http://127.0.0.1:8787/prod"`', table


def test_a_variable_holding_a_secret_is_not_recorded(example: Path, tmp_path: Path) -> None:
    (example / "webhooks.yaml").write_text(
        (example / "webhooks.yaml").read_text().replace(
            "    attachments:", "    headers: {X-Token: \"{{ secret('ALERTS_TOKEN') }}\"}\n"
            "    attachments:",
        )
    )  # fmt: skip
    token = "s3cret-token-value-1234"
    plan_file = tmp_path / "plan.json"
    keyed = {**STAGING_KEY, "ALERTS_TOKEN": token}
    made = run(example, "plan", "--env", "staging", "--out", str(plan_file), env=keyed)
    assert made.exit_code == 0, made.output
    assert token not in plan_file.read_text()  # a secret() value is a token, not a variable
    leaked = run(
        example, "plan", "--env", "staging", "--var", f"note={token}", "--format", "json",
        env=keyed,
    )  # fmt: skip
    assert leaked.exit_code == 1 and token not in leaked.output
    assert "variable note holds a secret's value" in leaked.output
    key = run(example, "plan", "--env", "staging", "--var", "k=staging-admin-key", env=keyed)
    assert key.exit_code == 1 and "variable k holds a secret's value (or the API key)" in (
        key.output
    )


def test_a_problem_of_every_environment_is_said_once(example: Path) -> None:
    root_file = example / "agentform.yaml"
    root_file.write_text(root_file.read_text().replace("  prod:", "  prød:"))
    result = run(example, "validate")
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if "error:" in line]
    assert lines == [
        "agentform.yaml:21:3: error: environments.prød: 'prød' is not an environment's "
        "name (letters, digits, _, . and -, up to 63)"
    ], result.output


def test_validate_of_one_environment_names_none(example: Path) -> None:
    (example / "pools.yaml").write_text("profilePools:\n  - {name: p, membrs: []}\n")
    for args in (["validate", "--env", "prod"], ["validate"]):
        result = run(example, *args)
        assert result.exit_code == 1
        assert "pools.yaml:2:15: error: profilePools.0.membrs: unknown key" in result.output, (
            result.output
        )
