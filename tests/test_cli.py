"""The command line, in-process on the local endpoint: exit codes, confirmation,
formats, init, validate, export, schema."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from agentform.api.retries import RetryPolicy
from agentform.cli.main import cli
from agentform.config.loader import load_workspace


def run(
    *args: str, input: str | None = None, env: Mapping[str, str | None] | None = None
) -> Result:
    return CliRunner().invoke(cli, list(args), input=input, env=env, catch_exceptions=False)


def declared(workspace: Path) -> int:
    """How many objects the workspace declares (attachments and batches included)."""
    return sum(len(items) for items in load_workspace(workspace).declared.values())


def test_quickstart_plan_apply_plan(quickstart: Path) -> None:
    ws = ["-C", str(quickstart)]
    n = declared(quickstart)
    first = run("plan", "--detailed-exitcode", *ws)
    assert first.exit_code == 2, first.output
    assert f"Plan: {n} to create, 0 to update, 0 to delete." in first.output
    applied = run("apply", "--auto-approve", *ws)
    assert applied.exit_code == 0, applied.output
    assert f"Apply: {n} succeeded, 0 failed, 0 not attempted." in applied.output
    for done in (
        "create profilePools/checkout-eu: done",
        "create profileGroups/eu-profiles: done",
        "create vaultTemplates/Shop login: done",
    ):
        assert done in applied.output  # progress, one line per finished change
    again = run("plan", "--detailed-exitcode", *ws)
    assert again.exit_code == 0 and "No changes." in again.output


def test_apply_without_a_terminal_needs_auto_approve(quickstart: Path) -> None:
    result = run("apply", "-C", str(quickstart), input="yes\n")
    assert result.exit_code != 0 and "--auto-approve" in result.output
    assert run("plan", "--detailed-exitcode", "-C", str(quickstart)).exit_code == 2


def test_apply_asks_and_only_yes_proceeds(
    quickstart: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agentform.cli.apply_cmd as apply_cmd

    monkeypatch.setattr(apply_cmd, "stdin_is_terminal", lambda: True)
    result = run("apply", "-C", str(quickstart), input="no\n")
    assert "Apply cancelled; nothing was changed." in result.output
    assert run("plan", "--detailed-exitcode", "-C", str(quickstart)).exit_code == 2
    result = run("apply", "-C", str(quickstart), input="yes\n")
    assert f"Apply: {declared(quickstart)} succeeded" in result.output


def test_plan_json_and_saved_plan(quickstart: Path, tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    result = run("plan", "--format", "json", "--out", str(out), "-C", str(quickstart))
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert data["formatVersion"] == 2 and data["summary"]["create"] == declared(quickstart)
    assert json.loads(out.read_text())["changes"] == data["changes"]
    applied = run("apply", str(out), "--format", "json", "-C", str(quickstart))
    assert applied.exit_code == 0, applied.output
    report = json.loads(applied.stdout)
    assert report["succeeded"] == declared(quickstart) and report["failed"] == 0
    assert report["formatVersion"] == 1 and report["workspace"] == "quickstart"
    nothing = run("apply", "--auto-approve", "--format", "json", "-C", str(quickstart))
    assert json.loads(nothing.stdout) == {
        "formatVersion": 1,
        "environment": None,  # the workspace declares no environments
        "workspace": "quickstart",
        "succeeded": 0,
        "alreadyInPlace": 0,
        "failed": 0,
        "notAttempted": 0,
        "interrupted": False,
        "policyOverrides": [],  # none was needed: the quickstart's plan breaks no policy
        "changes": [],
    }
    stale = run("apply", str(out), "-C", str(quickstart))
    assert stale.exit_code == 1 and "plan is stale" in stale.output


def test_an_edited_saved_plan_is_shown_but_never_applied(quickstart: Path, tmp_path: Path) -> None:
    """A saved plan is an assertion: `show` displays what the file says, and `apply`
    runs only when the files and the service imply exactly that."""
    ws = ["-C", str(quickstart)]
    run("apply", "--auto-approve", *ws)
    pools = quickstart / "pools.yaml"
    pools.write_text(
        pools.read_text().replace("allowConcurrentUse: false", "allowConcurrentUse: true")
    )
    out = tmp_path / "plan.json"
    assert run("plan", "--out", str(out), *ws).exit_code == 0
    data = json.loads(out.read_text())
    (change,) = data["changes"]
    change["calls"][0]["body"]["name"] = "renamed-by-forgery"
    out.write_text(json.dumps(data))
    shown = run("show", str(out), *ws)
    assert "allowConcurrentUse: false -> true" in shown.output, shown.output
    applied = run("apply", str(out), *ws)
    assert applied.exit_code == 1
    assert (
        "Error: the saved plan is not what the files and the service imply now: "
        f"{change['id']}: calls differ (at calls[0].body.name); nothing was written"
    ) in applied.output
    again = run("plan", "--detailed-exitcode", *ws)
    assert again.exit_code == 2 and "renamed-by-forgery" not in again.output


def test_verbose_plan_lists_no_ops_and_calls(quickstart: Path) -> None:
    run("apply", "--auto-approve", "-C", str(quickstart))
    (quickstart / "pools.yaml").write_text(
        (quickstart / "pools.yaml")
        .read_text()
        .replace("allowConcurrentUse: false", "allowConcurrentUse: true")
    )
    result = run("plan", "-v", "-C", str(quickstart))
    assert "= vaultTemplates/Shop login: matches live" in result.output
    assert "PATCH /agent-profile-pools/" in result.output
    assert "allowConcurrentUse: false -> true" in result.output


def test_var_overrides_and_files(quickstart: Path, tmp_path: Path) -> None:
    var_file = tmp_path / "vars.yaml"
    var_file.write_text("region: us\n")
    result = run("plan", "--var-file", str(var_file), "-C", str(quickstart))
    assert "profilePools/checkout-us" in result.output
    result = run("plan", "--var-file", str(var_file), "--var", "region=ap", "-C", str(quickstart))
    assert "profilePools/checkout-ap" in result.output


def test_validate_reports_problems_with_positions(quickstart: Path) -> None:
    files = len(list(quickstart.glob("*.yaml")))
    assert (
        f"Valid: {files} files, {declared(quickstart)} objects"
        in run("validate", "-C", str(quickstart)).output
    )
    (quickstart / "pools.yaml").write_text("profilePools:\n  - name: x\n    membrs: []\n")
    result = run("validate", "-C", str(quickstart))
    assert result.exit_code == 1
    assert "pools.yaml:3:5: error: profilePools.0.membrs: unknown key" in result.output
    assert "(did you mean 'members'?)" in result.output
    assert "1 problem; nothing was changed." in result.output


@pytest.mark.parametrize(
    ("written", "hint"),
    [
        ("locall", " (did you mean 'local'?)"),
        ("127.0.0.1:8700/agents/v2", " (did you mean 'http://127.0.0.1:8700/agents/v2'?)"),
        ("htps://u:pw-0000@example.com/agents/v2", ""),
    ],
)
def test_a_bad_endpoint_in_the_files_is_a_problem_at_its_line(
    tmp_path: Path, written: str, hint: str
) -> None:
    (tmp_path / "agentform.yaml").write_text(f"workspace: w\nendpoint: {written}\n")
    for command in ("validate", "plan"):
        result = run(command, "-C", str(tmp_path))
        assert result.exit_code == 1, result.output
        shown = written.replace("u:pw-0000@", "")  # a URL's password is never shown
        assert (
            f"agentform.yaml:2:11: error: endpoint: must be 'local' or an http(s) URL, "
            f"not '{shown}'{hint}\n" in result.output
        ), result.output
        assert "pw-0000" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agentform.yaml"]


def test_validate_counts_agree_with_their_nouns(tmp_path: Path) -> None:
    (tmp_path / "agentform.yaml").write_text("workspace: w\nprofilePools: [{name: p}]\n")
    result = run("validate", "-C", str(tmp_path))
    assert result.exit_code == 0 and "Valid: 1 file, 1 object (workspace w).\n" in result.output


def test_plan_out_into_a_new_directory_and_into_one_that_cannot_be(
    quickstart: Path, tmp_path: Path
) -> None:
    """`plan --out artifacts/plan.json` makes the directory (as --record-cassette does);
    a path that cannot be written is one clear line, not "a bug in agentform"."""
    saved = tmp_path / "artifacts" / "pr-7" / "plan.json"
    result = run("plan", "--out", str(saved), "-C", str(quickstart))
    assert result.exit_code == 0 and saved.is_file(), result.output
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = run("plan", "--out", str(blocker / "plan.json"), "-C", str(quickstart))
    assert result.exit_code == 1
    assert f"Error: cannot write the plan to {blocker / 'plan.json'}: " in result.output
    assert "bug" not in result.output and not list((quickstart / ".agentform").glob("crash-*"))


@pytest.mark.parametrize(
    ("args", "what"),
    [
        (["export", "--out", "{blocked}/exported"], "the export"),
        (["--record-cassette", "{blocked}/run.yaml", "plan"], "the cassette"),
    ],
    ids=["export", "cassette"],
)
def test_an_output_path_that_cannot_be_written_is_one_line(
    quickstart: Path, tmp_path: Path, args: list[str], what: str
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    args = [a.replace("{blocked}", str(blocker)) for a in args]
    result = run(*args, "-C", str(quickstart))
    assert result.exit_code == 1
    assert f"Error: cannot write {what} to {blocker}/" in result.output, result.output
    assert "bug" not in result.output and not list((quickstart / ".agentform").glob("crash-*"))


def test_suggested_commands_can_be_pasted_when_paths_hold_spaces(tmp_path: Path) -> None:
    target = tmp_path / "my ws"
    result = run("init", str(target))
    assert f"Next: agentform -C '{target}' plan\n" in result.output, result.output
    saved = target / "my plan.json"
    result = run("plan", "--out", str(saved), "-C", str(target))
    assert f"apply it with: agentform apply '{saved}'\n" in result.output, result.output
    exported = tmp_path / "the export"
    result = run("export", "--out", str(exported), "-C", str(target))
    assert f"check it with: agentform -C '{exported}' plan\n" in result.output, result.output


def test_init_scaffolds_a_workspace_that_plans(tmp_path: Path) -> None:
    target = tmp_path / "new-ws"
    assert run("init", str(target)).exit_code == 0
    assert ".agentform/" in (target / ".gitignore").read_text().splitlines()
    assert run("plan", "--detailed-exitcode", "-C", str(target)).exit_code == 2


HEADER_VALUES = {"OPS_ALERTS_X_TEAM": "quickstart-team"}  # the quickstart webhook's header


def test_export_into_an_empty_dir_is_a_workspace_that_plans_clean(
    quickstart: Path, tmp_path: Path
) -> None:
    run("apply", "--auto-approve", "-C", str(quickstart))
    out = tmp_path / "exported"
    result = run("export", "--out", str(out), "-C", str(quickstart))
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == [
        ".agentform",
        ".gitignore",
        "agentform.schema.json",
        "agentform.yaml",
        "batches.yaml",
        "profileGroups.yaml",
        "profilePools.yaml",
        "vaultTemplates.yaml",
        "webhooks.yaml",
    ]
    assert "quickstart-team" not in (out / "webhooks.yaml").read_text()  # never read back
    assert '{{ secret("OPS_ALERTS_X_TEAM") }}' in (out / "webhooks.yaml").read_text()
    assert "set OPS_ALERTS_X_TEAM" in result.output
    settings = yaml.safe_load((out / "agentform.yaml").read_text())
    assert settings["endpoint"] == "local"
    assert settings["organizationId"] == "0b7f3c1e-0000-4000-8000-000000000001"
    # the local service's state went along: the export plans clean on its own
    plan = run("plan", "--detailed-exitcode", "-C", str(out), env=HEADER_VALUES)
    assert plan.exit_code == 0, plan.output
    again = run("export", "--out", str(out), "-C", str(quickstart))
    assert again.exit_code == 1 and "exist already" in again.output
    assert "set OPS_ALERTS_X_TEAM" not in again.output  # nothing was written
    typo = run("export", "--kinds", "webhook", "-C", str(quickstart))
    assert typo.exit_code != 0 and "did you mean 'webhooks'?" in typo.output, typo.output


def test_export_adopts_a_service_without_a_workspace(quickstart: Path, tmp_path: Path) -> None:
    """The adoption path: no agentform.yaml anywhere, only an endpoint."""
    run("apply", "--auto-approve", "-C", str(quickstart))
    out = tmp_path / "adopted"
    empty = tmp_path / "empty"
    empty.mkdir()
    # the local endpoint of `empty` is its own service: give it the quickstart's state
    shutil.copytree(quickstart / ".agentform", empty / ".agentform")
    result = run("export", "--endpoint", "local", "--out", str(out), "-C", str(empty))
    assert result.exit_code == 0, result.output
    assert yaml.safe_load((out / "agentform.yaml").read_text())["workspace"] == "adopted"
    plan = run("plan", "--detailed-exitcode", "-C", str(out), env=HEADER_VALUES)
    assert plan.exit_code == 0, plan.output
    nothing = run("export", "--out", str(out / "x"), "-C", str(empty))
    assert nothing.exit_code == 1 and "--endpoint" in nothing.output


def test_endpoint_and_key_errors(quickstart: Path, tmp_path: Path) -> None:
    result = run("plan", "--endpoint", "ftp://x", "-C", str(quickstart))
    assert result.exit_code == 1 and "endpoint must be" in result.output
    result = plan_unreachable(quickstart, key="")
    assert result.exit_code == 1 and "no API key" in result.output
    key = tmp_path / "key"
    key.write_text("wrong-key-000000\n")
    result = run("plan", "--api-key-file", str(key), "-C", str(quickstart))
    assert result.exit_code == 1 and "401" in result.output
    assert "wrong-key-000000" not in result.output
    result = run(
        "plan", "--organization-id", "11111111-1111-4111-8111-111111111111", "-C", str(quickstart)
    )
    assert result.exit_code == 1 and "belongs to organization" in result.output


def test_unreachable_endpoint_is_a_clear_error(
    quickstart: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each request is retried as it would be, without the waits between (3 s of them).
    monkeypatch.setattr(RetryPolicy, "backoff", lambda self, attempt: 0.0)
    result = plan_unreachable(quickstart, key="k")
    assert result.exit_code == 1 and "cannot reach the service" in result.output


def plan_unreachable(workspace: Path, key: str) -> Result:
    """plan against a loopback port where nothing listens."""
    return run(
        "plan",
        "--endpoint",
        "http://127.0.0.1:9/agents/v2",
        "-C",
        str(workspace),
        env={"AGENTFORM_API_KEY": key},
    )


def test_an_api_key_file_written_with_a_bom_is_read(quickstart: Path, tmp_path: Path) -> None:
    """Editors on Windows start a UTF-8 file with a byte order mark (and end it with CRLF)."""
    from agentform.service import DEMO_ADMIN_KEY

    key = tmp_path / "key"
    key.write_bytes(b"\xef\xbb\xbf  " + DEMO_ADMIN_KEY.encode() + b"\r\n")
    result = run("plan", "--api-key-file", str(key), "-C", str(quickstart))
    assert result.exit_code == 0, result.output
    assert "Plan:" in result.output


@pytest.mark.parametrize("command", ["show", "apply"])
@pytest.mark.parametrize(
    ("name", "content"),
    [("pools.yaml", b"profilePools: []\n"), ("tool.bin", b"\x7fELF\x02\x01\x01\x00\xff\xfe")],
)
def test_a_file_that_is_not_a_saved_plan_is_one_line_naming_it(
    tmp_path: Path, command: str, name: str, content: bytes
) -> None:
    """A workspace file or a binary given where a saved plan goes: one line naming
    the file and what the command takes, not a crash (binary) or bare 'not JSON'."""
    given = tmp_path / name
    given.write_bytes(content)
    (tmp_path / "agentform.yaml").write_text("workspace: w\nendpoint: local\n")
    result = run(command, str(given), "-C", str(tmp_path))
    assert result.exit_code == 1, result.output
    assert result.output.strip().splitlines() == [
        f"Error: {given} is not a saved plan (the JSON file `agentform plan --out FILE` writes)"
    ]


def test_validate_needs_no_secret_values(tmp_path: Path) -> None:
    """validate runs offline in pre-commit and the PR job's first step, where no
    secret is set: an unset secret() passes every rule a value would; plan still
    names each one missing, at its line."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "agentform.yaml").write_text("workspace: s\nendpoint: local\n")
    (ws / "hooks.yaml").write_text(
        "webhooks:\n  - name: h\n    url: https://hooks.example.com/x\n"
        "    headers: {Authorization: \"Bearer {{ secret('OPS_TOKEN') }}\"}\n"
    )
    checked = run("validate", "-C", str(ws), env={"OPS_TOKEN": None})
    assert checked.exit_code == 0, checked.output
    assert "Valid: 2 files, 1 object (workspace s)." in checked.stdout
    assert "note: secret OPS_TOKEN is not set here: plan checks its value" in checked.stderr
    planned = run("plan", "-C", str(ws), env={"OPS_TOKEN": None})
    assert planned.exit_code == 1
    assert "hooks.yaml:4:41: error: secret OPS_TOKEN: environment variable is not set" in (
        planned.output
    )
    bad = run("validate", "-C", str(ws), env={"OPS_TOKEN": "two\nlines"})
    assert bad.exit_code == 1 and "printable ASCII" in bad.output


@pytest.mark.parametrize("option", ["--out", "--record-cassette"])
def test_an_output_never_replaces_a_file_agentform_did_not_write(
    quickstart: Path, option: str
) -> None:
    """`plan --out pools.yaml` turned a workspace file into a plan, which the next
    apply read as the pools removed (and, with prune, deleted them)."""
    pools = quickstart / "pools.yaml"
    before = pools.read_text()
    result = run("plan", option, str(pools), "-C", str(quickstart))
    assert result.exit_code == 1
    assert f"Error: {pools} exists and agentform did not write it" in result.output
    assert pools.read_text() == before
    saved = quickstart.parent / "plan.json"
    assert run("plan", "--out", str(saved), "-C", str(quickstart)).exit_code == 0
    assert run("plan", "--out", str(saved), "-C", str(quickstart)).exit_code == 0  # its own


def test_an_unwritable_cassette_path_is_an_error_before_any_call(quickstart: Path) -> None:
    result = run("plan", "--record-cassette", "/proc/run.yaml", "-C", str(quickstart))
    assert result.exit_code == 1
    assert result.output.startswith("Error: cannot write the cassette to /proc/run.yaml")


def test_a_saved_plan_applies_only_to_the_endpoint_it_was_made_for(
    quickstart: Path, tmp_path: Path
) -> None:
    saved = tmp_path / "plan.json"
    assert run("plan", "--out", str(saved), "-C", str(quickstart)).exit_code == 0
    other = "http://127.0.0.1:9/agents/v2"
    key = {"AGENTFORM_API_KEY": "a-key"}
    result = run("apply", str(saved), "--endpoint", other, "-C", str(quickstart), env=key)
    assert result.exit_code == 1
    assert (
        f"the plan is for endpoint local, not {other}: apply it where it was made "
        "(--endpoint local)"
    ) in result.output


def test_problems_shown_are_capped(tmp_path: Path) -> None:
    """One broken large file made 399,999 lines: 200 are shown, the count says all."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "agentform.yaml").write_text("workspace: w\n")
    (ws / "pools.yaml").write_text(
        "profilePools:\n" + "".join(f"  - {{name: p{n}, colour: red}}\n" for n in range(300))
    )
    result = run("validate", "-C", str(ws))
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert len(lines) == 202 and lines[-2] == "… and 100 more lines not shown"
    assert lines[-1] == "300 problems; nothing was changed."


@pytest.mark.parametrize(("content", "said"), [(None, "cannot read"), ("", "is empty")])
def test_an_api_key_file_that_gives_no_key_is_named(
    quickstart: Path, tmp_path: Path, content: str | None, said: str
) -> None:
    key_file = tmp_path / "key.txt"
    if content is not None:
        key_file.write_text(content)
    endpoint = "http://127.0.0.1:9/agents/v2"
    result = run(
        "plan", "--endpoint", endpoint, "--api-key-file", str(key_file), "-C", str(quickstart)
    )
    assert result.exit_code == 1
    assert f"the API key file {key_file}" in result.output and said in result.output


def test_init_in_the_current_directory_suggests_plan_without_c(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run("init")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == "Next: agentform plan"


@pytest.mark.parametrize(
    ("var", "said"),
    [
        ("=x", "'' is not a variable's name"),
        ("vars.x=1", "'vars.x' is not a variable's name (the NAME alone: templates read it as"),
    ],
)
def test_a_var_without_a_name_is_a_usage_error(quickstart: Path, var: str, said: str) -> None:
    result = run("validate", "--var", var, "-C", str(quickstart))
    assert result.exit_code == 1 and said in result.output


def test_a_damaged_plan_file_says_where(quickstart: Path, tmp_path: Path) -> None:
    saved = tmp_path / "plan.json"
    assert run("plan", "--out", str(saved), "-C", str(quickstart)).exit_code == 0
    data = json.loads(saved.read_text())
    data["warnings"] = [{"text": "injected"}]
    saved.write_text(json.dumps(data))
    result = run("show", str(saved), "-C", str(quickstart))
    assert result.exit_code == 1
    assert "Error: the plan file is damaged: 2 problems, the first at warnings.0.message" in (
        result.output
    )


def test_init_with_environments_suggests_a_plan_that_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run("init", "ws", "--env", "staging,prod")
    assert result.exit_code == 0, result.output
    suggested = result.output.splitlines()[-1]
    assert suggested == "Next: agentform -C ws plan --env staging", result.output
    planned = run(*suggested.split()[2:])
    assert planned.exit_code == 0, planned.output


def test_list_with_a_broken_file_says_what_is_true(quickstart: Path) -> None:
    """list changes nothing ever: its problems' summary said "nothing was changed"."""
    (quickstart / "broken.yaml").write_text("profilePools:\n  - name: a\n    colour: red\n")
    result = CliRunner().invoke(cli, ["list", "-C", str(quickstart)])
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == "1 problem; list changes nothing.", result.output
