"""The command-line conventions pipelines rely on: global options before or after the
command, exit codes, colour rules, init refusing to overwrite, ignored artifacts."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from agentform.cli.conventions import SuggestingChoice
from agentform.cli.main import cli
from agentform.cli.options import color_wanted
from tests.provisioner.harness import RequestLog

QUICKSTART = Path(__file__).parents[1] / "examples" / "quickstart"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, root, ignore=shutil.ignore_patterns(".agentform"))
    return root


def run(*args: str, input: str | None = None, env: dict[str, str] | None = None) -> Result:
    base = {"NO_COLOR": "", "FORCE_COLOR": "", "AGENTFORM_ENDPOINT": ""}
    return CliRunner().invoke(
        cli, list(args), input=input, env={**base, **(env or {})}, catch_exceptions=False
    )


# -- global options anywhere -------------------------------------------------


def test_global_options_before_the_command(ws: Path) -> None:
    before = run("-C", str(ws), "plan", "--detailed-exitcode")
    after = run("plan", "--detailed-exitcode", "-C", str(ws))
    assert before.exit_code == after.exit_code == 2
    assert before.stdout == after.stdout
    verbose = run("-v", "-C", str(ws), "plan")
    assert "PUT" in verbose.stdout or "POST /agent-profile-pools" in verbose.stdout
    assert "POST /agent-profile-pools" not in run("-C", str(ws), "plan").stdout


def test_options_after_the_command_win_and_vars_merge(ws: Path, tmp_path: Path) -> None:
    result = run("-C", str(tmp_path / "nowhere"), "--var", "region=us", "plan", "-C", str(ws))
    assert result.exit_code == 0 and "profilePools/checkout-us" in result.stdout
    result = run("--var", "region=us", "plan", "-C", str(ws), "--var", "region=ap")
    assert "profilePools/checkout-ap" in result.stdout


def test_no_color_and_format_before_the_command(ws: Path) -> None:
    coloured = run("--color", "-C", str(ws), "plan")
    assert ANSI.search(coloured.stdout)
    plain = run("--no-color", "-C", str(ws), "plan", env={"FORCE_COLOR": "1"})
    assert not ANSI.search(plain.stdout)


def test_init_takes_the_directory_from_global_C(tmp_path: Path) -> None:
    result = run("-C", str(tmp_path / "w"), "init")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "w" / "agentform.yaml").exists()


# -- exit codes --------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["plan", "--no-such-option"],
        ["no-such-command"],
        ["plan", "--format", "yaml"],
        ["plan", "--var", "novalue"],
        ["apply", "--parallelism", "0"],
        ["service", "run", "--port", "x"],
        [],
    ],
    ids=[
        "unknown-option",
        "unknown-command",
        "bad-choice",
        "bad-var",
        "bad-range",
        "nested",
        "bare",
    ],
)
def test_usage_errors_exit_1_not_2(args: list[str], ws: Path) -> None:
    result = run(*args)
    assert result.exit_code == 1, result.output


@pytest.mark.parametrize(
    ("env", "args", "said"),
    [
        ({"AGENTFORM_RATE_LIMIT": "fast"}, [], "Invalid value for AGENTFORM_RATE_LIMIT: "),
        ({}, ["--rate-limit", "fast"], "Invalid value for '--rate-limit': "),
        (
            {"AGENTFORM_ENDPOINT": "locall"},
            [],
            "Invalid value for AGENTFORM_ENDPOINT: endpoint must be 'local' or an http(s) "
            "URL, not 'locall' (did you mean 'local'?)",
        ),
        (
            {},
            ["--endpoint", "ftp://u:pw-0000@x"],
            "Invalid value for '--endpoint': endpoint must be 'local' or an http(s) URL, "
            "not 'ftp://x'",
        ),
    ],
    ids=["rate-env", "rate-option", "endpoint-env", "endpoint-option"],
)
def test_a_bad_value_names_where_it_came_from(
    ws: Path, env: dict[str, str], args: list[str], said: str
) -> None:
    """An environment variable is named as such, not as the option the user never typed;
    a bad endpoint is refused before anything is read or written."""
    before = sorted(p.name for p in ws.iterdir())
    result = run("plan", "-C", str(ws), *args, env=env)
    assert result.exit_code == 1, result.output
    assert said in result.output, result.output
    assert "pw-0000" not in result.output
    assert sorted(p.name for p in ws.iterdir()) == before


@pytest.mark.parametrize(
    "env",
    [{"AGENTFORM_RATE_LIMIT": "fast"}, {"AGENTFORM_ENDPOINT": "locall"}],
    ids=["rate", "endpoint"],
)
def test_a_bad_environment_variable_stops_only_what_uses_it(
    ws: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    """A pipeline sets these for every step: help, validate, show and service run do not
    use them and must not stop on them (they all ended in click's usage text), and a
    command that uses one says so in one line."""
    assert run("plan", "-C", str(ws), "--out", str(tmp_path / "plan.json")).exit_code == 0
    for args in (
        ["plan", "--help"],
        ["service", "run", "--help"],
        ["validate", "-C", str(ws)],
        ["show", str(tmp_path / "plan.json"), "-C", str(ws)],
    ):
        result = run(*args, env=env)
        assert result.exit_code == 0, (args, result.output)
    result = run("plan", "-C", str(ws), env=env)
    [name] = env
    assert result.exit_code == 1
    [line] = result.output.splitlines()
    assert line.startswith(f"Error: Invalid value for {name}: "), line


@pytest.mark.parametrize(
    ("typed", "meant"),
    [("-auto-approve", "--auto-approve"), ("-lock-timeout=5m", "--lock-timeout=5m")],
)
def test_terraforms_single_dash_long_options_get_a_suggestion(
    ws: Path, typed: str, meant: str
) -> None:
    """Terraform spells options with one dash; click reads `-auto-approve` as `-a` and
    would only say that `-a` does not exist."""
    result = run("apply", typed, "-C", str(ws))
    assert result.exit_code == 1
    assert f"No such option '{typed}'. Did you mean '{meant}'?" in result.output, result.output
    assert not (ws / ".agentform").exists()


def test_a_mistyped_command_gets_a_suggestion() -> None:
    result = run("paln")
    assert result.exit_code == 1 and "Did you mean 'plan'?" in result.output


def _every_choice(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[str, Any]]:
    found = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):  # loaded when asked for: lazy groups too
        command = group.get_command(ctx, name)
        assert command is not None
        if isinstance(command, click.Group):
            found += _every_choice(command, (*path, name))
        found += [
            (" ".join((*path, name, p.name or "")), p.type)
            for p in command.params
            if isinstance(p.type, click.Choice)
        ]
    return found


def test_every_choice_of_the_cli_suggests_the_closest() -> None:
    """One suggestion mechanism for every value of a fixed set: `--status deliverd` and
    `--clock manul` were refused without the "did you mean" a format's typo gets."""
    plain = [where for where, kind in _every_choice(cli) if not isinstance(kind, SuggestingChoice)]
    assert plain == []
    result = run("webhook", "deliveries", "ops", "--status", "deliverd")
    assert result.exit_code == 1
    assert "(did you mean 'delivered'?)" in result.output, result.output
    result = run("service", "run", "--clock", "manul")
    assert result.exit_code == 1 and "(did you mean 'manual'?)" in result.output, result.output


@pytest.mark.parametrize("command", ["plan", "apply", "drift"])
def test_a_mistyped_format_gets_a_suggestion(command: str, ws: Path) -> None:
    result = run(command, "-C", str(ws), "--format", "jsn")
    assert result.exit_code == 1
    assert "'jsn' is not one of 'text', 'markdown', 'json' (did you mean 'json'?)" in result.output
    assert not (ws / ".agentform").exists()


def test_exit_codes_of_plan(ws: Path) -> None:
    assert run("plan", "-C", str(ws)).exit_code == 0
    assert run("plan", "--detailed-exitcode", "-C", str(ws)).exit_code == 2
    assert run("apply", "--auto-approve", "-C", str(ws)).exit_code == 0
    assert run("plan", "--detailed-exitcode", "-C", str(ws)).exit_code == 0
    (ws / "pools.yaml").write_text("profilePools: [{name: x, membrs: []}]\n")
    assert run("plan", "--detailed-exitcode", "-C", str(ws)).exit_code == 1


def test_applying_a_saved_plan_without_changes_says_so(ws: Path) -> None:
    """It printed nothing at all (the live apply prints its plan's "No changes.")."""
    assert run("apply", "--auto-approve", "-C", str(ws)).exit_code == 0
    assert run("plan", "-C", str(ws), "--out", str(ws / "plan.json")).exit_code == 0
    result = run("apply", str(ws / "plan.json"), "-C", str(ws))
    assert result.exit_code == 0, result.output
    assert result.output == "Apply: 0 succeeded, 0 failed, 0 not attempted.\n"


def test_apply_without_a_terminal_to_confirm_on_is_one_line(ws: Path) -> None:
    """A pipeline that forgot --auto-approve: the plan, then one error line (it came
    with click's usage text, as if the command line were wrong), nothing changed."""
    result = run("apply", "-C", str(ws))
    assert result.exit_code == 1
    assert "Plan: 10 to create" in result.output and "Usage:" not in result.output
    assert result.output.endswith(
        "\nError: no terminal to confirm on: review the plan and use --auto-approve\n"
    )
    assert run("plan", "--detailed-exitcode", "-C", str(ws)).exit_code == 2


def test_a_cancelled_interactive_apply_exits_1(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import agentform.cli.apply_cmd as apply_cmd

    monkeypatch.setattr(apply_cmd, "stdin_is_terminal", lambda: True)
    result = run("apply", "-C", str(ws), input="no\n")
    assert result.exit_code == 1 and "Apply cancelled; nothing was changed." in result.output
    aborted = run("apply", "-C", str(ws), input="")  # end of input at the prompt (Ctrl-D)
    assert aborted.exit_code == 1
    assert run("plan", "--detailed-exitcode", "-C", str(ws)).exit_code == 2


def test_apply_with_a_failed_change_exits_1(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import agentform.service as service

    real = service.create_app

    class FailingApp(RequestLog):
        def __getattr__(self, name: str) -> Any:  # the service's state, for its runner
            return getattr(self.app, name)

    def failing_app(*args: Any, **kwargs: Any) -> RequestLog:
        return FailingApp(
            real(*args, **kwargs),
            fail=lambda m, p: 400 if (m, p) == ("POST", "/vault/templates") else None,
        )

    monkeypatch.setattr(service, "create_app", failing_app)
    result = run("apply", "--auto-approve", "-C", str(ws))
    assert result.exit_code == 1, result.output
    assert "create vaultTemplates/Shop login: FAILED" in result.stdout
    assert re.search(r"Apply: \d+ succeeded, 1 failed, 0 not attempted\.", result.stdout)


# -- colour --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "terminal", "env", "expected"),
    [
        (None, True, {}, True),
        (None, False, {}, False),
        (True, False, {}, True),
        (False, True, {}, False),
        (None, True, {"NO_COLOR": "1"}, False),
        (None, False, {"FORCE_COLOR": "1"}, True),
        (None, False, {"FORCE_COLOR": "0"}, False),
        (None, False, {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
        (True, False, {"NO_COLOR": "1"}, True),
        (False, True, {"FORCE_COLOR": "1"}, False),
        (None, True, {"TERM": "dumb"}, False),
    ],
)
def test_color_rules(
    flag: bool | None, terminal: bool, env: dict[str, str], expected: bool
) -> None:
    assert color_wanted(flag, terminal, env) is expected


def test_colour_on_a_terminal_off_when_piped(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert not ANSI.search(run("plan", "-C", str(ws)).stdout)  # CliRunner is a pipe
    assert ANSI.search(run("plan", "-C", str(ws), env={"FORCE_COLOR": "1"}).stdout)
    assert not ANSI.search(
        run("plan", "-C", str(ws), env={"NO_COLOR": "1", "FORCE_COLOR": "1"}).stdout
    )
    import agentform.cli.options as options

    monkeypatch.setattr(options, "stdout_is_terminal", lambda: True)
    assert ANSI.search(run("plan", "-C", str(ws)).stdout)
    assert not ANSI.search(run("plan", "-C", str(ws), env={"NO_COLOR": "1"}).stdout)


# -- init ------------------------------------------------------------------------


def test_init_writes_modelines_schema_gitignore_and_settings(tmp_path: Path) -> None:
    target = tmp_path / "payments"
    org = "5b6c0000-0000-4000-8000-000000000001"
    result = run(
        "init", str(target), "--endpoint", "https://agents.example.com/agents/v2",
        "--organization-id", org,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    root = (target / "agentform.yaml").read_text()
    assert root.startswith("# yaml-language-server: $schema=agentform.schema.json\n")
    assert "endpoint: https://agents.example.com/agents/v2" in root
    assert f"organizationId: {org}" in root
    assert (target / "pools.yaml").read_text().startswith("# yaml-language-server: $schema=")
    schema = json.loads((target / "agentform.schema.json").read_text())
    assert schema["$id"]
    ignored = (target / ".gitignore").read_text().splitlines()
    assert ".agentform/" in ignored and "*.cassette.yaml" in ignored and "plan.json" in ignored
    assert run("validate", "-C", str(target)).exit_code == 0


def test_init_refuses_to_overwrite_and_lists_the_files(tmp_path: Path) -> None:
    target = tmp_path / "ws"
    target.mkdir()
    (target / "pools.yaml").write_text("mine: true\n")
    (target / ".gitignore").write_text("node_modules/\n")
    result = run("init", str(target))
    assert result.exit_code == 1
    assert str(target / "pools.yaml") in result.output
    assert str(target / ".gitignore") not in result.output  # merged into, never overwritten
    assert (target / "pools.yaml").read_text() == "mine: true\n"
    assert not (target / "agentform.yaml").exists()
    forced = run("init", str(target), "--force")
    assert forced.exit_code == 0
    assert "profilePools" in (target / "pools.yaml").read_text()
    kept = (target / ".gitignore").read_text().splitlines()
    assert kept[0] == "node_modules/" and ".agentform/" in kept


def test_init_in_a_directory_holding_only_a_gitignore_merges_into_it(tmp_path: Path) -> None:
    target = tmp_path / "ws"
    target.mkdir()
    (target / ".gitignore").write_text("node_modules/\n")
    result = run("init", str(target))
    assert result.exit_code == 0, result.output
    kept = (target / ".gitignore").read_text().splitlines()
    assert kept[0] == "node_modules/" and ".agentform/" in kept
    assert (target / "agentform.yaml").is_file()


def test_init_among_other_yaml_files_ignores_them_so_the_next_plan_works(tmp_path: Path) -> None:
    """`init` in a repository that has YAML of its own (compose files, manifests): the
    plan it suggests next would stop at "not a workspace file"; init lists them in
    .agentformignore (keeping its lines) and says so. A workspace file written before
    init, a misspelt kind included, and a file that does not parse are left alone."""
    target = tmp_path / "repo"
    (target / "deploy").mkdir(parents=True)
    (target / "docker-compose.yml").write_text("services:\n  web: {image: nginx}\n")
    (target / "deploy" / "k8s.yaml").write_text("kind: Service\n---\nkind: Deployment\n")
    # read as the loader reads it: `on:` is the key 'on', not YAML 1.1's True ('prune'?)
    (target / "ci.yaml").write_text("name: ci\non: push\njobs: {}\n")
    (target / "hooks.yaml").write_text("webhooks: []\n")
    (target / "groups.yaml").write_text("profileGroup: []\n")  # misspelt: plan says so
    (target / "broken.yaml").write_text("a: [\n")
    (target / ".agentformignore").write_text("notes/\n")
    result = run("init", str(target))
    assert result.exit_code == 0, result.output
    assert (target / ".agentformignore").read_text().splitlines() == [
        "notes/",
        "/ci.yaml",
        "/deploy/k8s.yaml",
        "/docker-compose.yml",
    ]
    assert (
        "not workspace files, now in .agentformignore: ci.yaml, deploy/k8s.yaml, "
        "docker-compose.yml" in result.output
    )
    (target / "groups.yaml").unlink()
    (target / "broken.yaml").unlink()
    assert run("validate", "-C", str(target)).exit_code == 0


@pytest.mark.parametrize(
    "args", [["--endpoint", "ftp://x"], ["--organization-id", "not-a-uuid"]], ids=["url", "org"]
)
def test_init_rejects_bad_values(tmp_path: Path, args: list[str]) -> None:
    result = run("init", str(tmp_path / "w"), *args)
    assert result.exit_code == 1 and not (tmp_path / "w").exists()


def test_init_refuses_an_endpoint_as_every_command_does(tmp_path: Path) -> None:
    result = run("init", str(tmp_path / "w"), "--endpoint", "htps://u:pw-0000@x/agents/v2")
    assert result.exit_code == 1 and not (tmp_path / "w").exists()
    assert (
        "Invalid value for '--endpoint': endpoint must be 'local' or an http(s) URL, "
        "not 'htps://x/agents/v2'" in result.output
    ), result.output
    assert "pw-0000" not in result.output


# -- workspace files and artifacts --------------------------------------------


def test_a_cassette_recorded_in_the_workspace_is_not_read_back(ws: Path) -> None:
    first = run("plan", "--record-cassette", str(ws / "run.yaml"), "-C", str(ws))
    assert first.exit_code == 0 and (ws / "run.yaml").exists()
    second = run("plan", "-C", str(ws))
    assert second.exit_code == 0, second.output


def test_a_saved_plan_in_the_workspace_is_not_read_back(ws: Path) -> None:
    assert run("plan", "--out", str(ws / "plan.yaml"), "-C", str(ws)).exit_code == 0
    (ws / "sub").mkdir()
    (ws / "sub" / "report.yml").write_text(run("drift", "--format", "json", "-C", str(ws)).stdout)
    result = run("validate", "-C", str(ws))
    files = len(list(QUICKSTART.glob("*.yaml")))  # the artifacts are not counted
    assert result.exit_code == 0 and f"Valid: {files} files" in result.output


def test_agentformignore_and_yml_files(ws: Path) -> None:
    (ws / "extra.yml").write_text("profileGroups: [{name: from-yml}]\n")
    (ws / "drafts").mkdir()
    (ws / "drafts" / "wip.yaml").write_text("profilePools: [{name: draft, colour: red}]\n")
    (ws / "docker-compose.yaml").write_text("services: {}\n")
    broken = run("validate", "-C", str(ws))
    assert broken.exit_code == 1
    assert "docker-compose.yaml:1:1: error: not a workspace file" in broken.output
    assert ".agentformignore" in broken.output
    (ws / ".agentformignore").write_text("# not ours\ndrafts/\n/docker-compose.yaml\n")
    result = run("plan", "-C", str(ws))
    assert result.exit_code == 0, result.output
    assert "profileGroups/from-yml" in result.stdout and "draft" not in result.stdout


def test_an_export_into_a_subdirectory_is_a_workspace_of_its_own(ws: Path) -> None:
    """A directory under the workspace holding its own agentform.yaml (an export,
    another workspace of a monorepo) is that workspace's, not read into this one."""
    assert run("apply", "--auto-approve", "-C", str(ws)).exit_code == 0
    exported = run("export", "--out", str(ws / "exported"), "-C", str(ws))
    assert exported.exit_code == 0, exported.output
    (ws / "nested" / "deeper").mkdir(parents=True)
    (ws / "nested" / "agentform.yml").write_text("workspace: nested\n")
    (ws / "nested" / "deeper" / "pools.yaml").write_text("profilePools: [{name: elsewhere}]\n")
    result = run("plan", "--detailed-exitcode", "-C", str(ws))
    assert result.exit_code == 0, result.output
    assert "No changes." in result.stdout and "elsewhere" not in result.stdout


def test_a_file_whose_only_key_is_a_misspelt_kind_gets_a_suggestion(ws: Path) -> None:
    """Not 'not a workspace file, list it in .agentformignore': the key is a typo."""
    (ws / "groups2.yaml").write_text("profileGroup:\n  - name: g\n")
    result = run("validate", "-C", str(ws))
    assert result.exit_code == 1
    assert "did you mean 'profileGroups'?" in result.output
    assert "not a workspace file" not in result.output


def test_a_workflow_file_is_not_taken_for_a_misspelt_setting(ws: Path) -> None:
    """YAML 1.1 reads `on:` as the boolean true, which is no misspelling of 'prune':
    a GitHub workflow beside the files is "not a workspace file", with the hint."""
    (ws / "ci.yaml").write_text("name: ci\non: push\njobs: {}\n")
    result = run("validate", "-C", str(ws))
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == (
        "ci.yaml:1:1: error: not a workspace file: none of its keys is a kind or a "
        "setting (if it is not one, list it in .agentformignore)"
    ), result.output
    assert "True" not in result.output and "prune" not in result.output


def test_a_var_file_in_the_workspace_is_not_a_workspace_file(ws: Path) -> None:
    """`--var-file vars.yaml` beside the files (as terraform.tfvars sits beside .tf
    files) gives variables; it was also read as a workspace file and refused."""
    (ws / "prod.yaml").write_text("region: us\n")
    (ws / "agentform.yaml").write_text(
        (ws / "agentform.yaml").read_text().replace("vars:\n  region: eu\n", "")
    )
    result = run("plan", "-C", str(ws), "--var-file", str(ws / "prod.yaml"))
    assert result.exit_code == 0, result.output
    assert "profilePools/checkout-us" in result.output
    alone = run("validate", "-C", str(ws))  # named by no --var-file: a file like any other
    assert alone.exit_code == 1 and "prod.yaml:1:1: error: not a workspace file" in alone.output


def test_root_file_may_be_yml_but_not_both(ws: Path) -> None:
    (ws / "agentform.yaml").rename(ws / "agentform.yml")
    assert run("validate", "-C", str(ws)).exit_code == 0
    (ws / "agentform.yaml").write_text("workspace: two\n")
    result = run("validate", "-C", str(ws))
    assert result.exit_code == 1 and "keep one" in result.output


@pytest.mark.parametrize(
    "endpoint",
    ['http://127.0.0.1:1/agents/v2?token=tok-é"\\1', 'http://127.0.0.1:1/agents/v2#tok-é"\\1'],
)
def test_an_endpoint_with_a_query_or_fragment_is_refused_without_showing_it(
    ws: Path, endpoint: str
) -> None:
    """`--endpoint 'http://…/agents/v2?token=abc'` was echoed whole in the errors that
    named the service: a token written there was printed. An endpoint is a base URL:
    a query or fragment has no place in it (requests would not carry it)."""
    result = run("plan", "-C", str(ws), "--endpoint", endpoint)
    assert result.exit_code != 0
    assert "tok-" not in result.output
    assert "endpoint must have no query string or fragment" in result.output, result.output


def test_an_endpoint_is_shown_without_credentials_query_or_fragment() -> None:
    from agentform.api.endpoint_url import shown_endpoint

    shown = shown_endpoint("http://u:pw-0000@h:1/agents/v2?token=tok-1#frag-1")
    assert shown == "http://h:1/agents/v2"


# -- DIRS are for --all ----------------------------------------------------------


@pytest.mark.parametrize("command", ["list", "validate"])
def test_dirs_without_all_are_refused_alike(command: str, ws: Path) -> None:
    """`list DIRS` and `validate DIRS` without --all would work on -C's workspace and
    ignore DIRS: both refuse, in the same words (cli/common.py), and change nothing."""
    odd = ws / "teams" / 'ü "a\\b'  # a directory's name is shown as it is
    odd.mkdir(parents=True)
    before = sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*"))
    result = run("-C", str(ws), command, str(ws / "teams"), str(odd))
    assert result.exit_code == 1, result.output
    assert result.output == (
        f"Error: {command} DIRS needs --all: without it, {command} works on the workspace "
        f"of -C; add --all for every workspace under {ws / 'teams'}, {odd}\n"
    )
    assert sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*")) == before
