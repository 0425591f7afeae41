"""Policies on the quickstart's plans through the command line: verdicts in every
format, apply's refusals and recorded overrides, saved plans judged again, secrets
opaque to rules, the base branch judging, and the iteration budget."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import QUICKSTART
from tests.test_cli import run

EXAMPLES = Path(__file__).parents[2] / "examples" / "policies"
HTTPS = """\
rules:
  - name: https-webhooks
    description: webhooks deliver over https only
    level: {level}
    match: {{kinds: [webhooks], actions: [create, update]}}
    deny: "!change.after.url.startsWith('https://')"
    message: "'webhook ' + change.name + ' must use https, not ' + change.after.url"
"""


@pytest.fixture
def quickstart(quickstart: Path) -> Path:
    """The quickstart without its own policies: each test writes those it needs."""
    shutil.rmtree(quickstart / "policies")
    return quickstart


def test_the_quickstarts_policies_judge_its_plan(tmp_path: Path) -> None:
    root = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, root, ignore=shutil.ignore_patterns(".agentform"))
    document = json.loads(run("plan", "--format", "json", "-C", str(root)).output)["policies"]
    assert {r["name"]: r["checked"] for r in document["rules"]} == {
        "webhooks-https-or-loopback": 2,
        "few-deletes": 1,
    }
    assert document["violations"] == []
    tests = run("policy", "test", "--coverage", "-C", str(root))
    assert tests.exit_code == 0 and "4 passed, 0 failed" in tests.output


def with_policy(root: Path, text: str, name: str = "rules.yaml") -> Path:
    (root / "policies").mkdir(exist_ok=True)
    (root / "policies" / name).write_text(text)
    return root


def test_plan_shows_each_violation_at_its_field(quickstart: Path) -> None:
    ws = ["-C", str(with_policy(quickstart, HTTPS.format(level="mandatory")))]
    text = run("plan", *ws).output
    assert "Policies: 2 violations (2 mandatory) of 1 rule." in text
    assert "mandatory rule https-webhooks violated at webhooks/ops-alerts, url" in text
    assert 'url: "http://127.0.0.1:8787/events"' in text
    assert "webhook ops-alerts must use https, not http://127.0.0.1:8787/events" in text
    assert "rule at policies/rules.yaml:2" in text
    assert text.index("Policies:") < text.index("+ profileGroups/eu-profiles")
    document = json.loads(run("plan", "--format", "json", *ws).output)["policies"]
    assert document["rules"] == [
        {
            "name": "https-webhooks",
            "level": "mandatory",
            "file": "policies/rules.yaml",
            "line": 2,
            "checked": 2,
            "violated": 2,
        }
    ]
    assert document["violations"][0] == {
        "rule": "https-webhooks",
        "level": "mandatory",
        "outcome": "violated",
        "address": "webhooks/ops-alerts",
        "path": "url",
        "message": "webhook ops-alerts must use https, not http://127.0.0.1:8787/events",
    }
    markdown = run("plan", "--format", "markdown", *ws).output
    assert (
        "> [!CAUTION]" in markdown and "https-webhooks violated at webhooks/ops-alerts" in markdown
    )


@pytest.mark.parametrize(
    "deny",
    [
        "[change].exists(d, !d.after.url.startsWith('https://'))",
        "!(change).after.url.startsWith('https://')",
    ],
)
def test_a_change_read_through_a_variable_is_given_the_fields_it_reads(
    quickstart: Path, deny: str
) -> None:
    """A change's objects hold only the fields its rules read; a variable standing for
    the change (`[change].exists(d, d.after.url ...)`) read none, so the rule could not
    be evaluated ("Key not found in map")."""
    policy = HTTPS.format(level="mandatory").replace(
        "\"!change.after.url.startsWith('https://')\"", json.dumps(deny)
    )
    policy = policy.replace(" + ' must use https, not ' + change.after.url", "")  # reads url
    assert deny in policy and "change.after.url" not in policy
    text = run("plan", "-C", str(with_policy(quickstart, policy))).output
    assert "could not be evaluated" not in text
    assert "Policies: 2 violations (2 mandatory) of 1 rule." in text
    assert "mandatory rule https-webhooks violated at webhooks/ops-alerts, url" in text


def test_a_plan_without_policies_has_no_policies_key(quickstart: Path) -> None:
    document = json.loads(run("plan", "--format", "json", "-C", str(quickstart)).output)
    assert "policies" not in document


def test_apply_refuses_a_mandatory_violation_until_overridden_with_a_reason(
    quickstart: Path,
) -> None:
    ws = ["-C", str(with_policy(quickstart, HTTPS.format(level="mandatory")))]
    refused = run("apply", "--auto-approve", *ws)
    assert refused.exit_code == 1
    assert "the policies refuse this apply; nothing was written" in refused.output
    assert "--override-policy https-webhooks --reason" in refused.output
    assert run("plan", "--detailed-exitcode", *ws).exit_code == 2  # nothing written
    no_reason = run("apply", "--auto-approve", "--override-policy", "https-webhooks", *ws)
    assert no_reason.exit_code == 1 and "needs --reason" in no_reason.output
    typo = run(
        "apply", "--auto-approve", "--override-policy", "https-webhook", "--reason", "x", *ws
    )
    assert "no such rule (did you mean 'https-webhooks'?)" in typo.output
    reason = "loopback receiver, «demo» only"
    done = run(
        "apply", "--auto-approve", "--format", "json",
        "--override-policy", "https-webhooks", "--reason", reason, *ws,
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    report = json.loads(done.output[done.output.index("{") :])
    (override,) = report["policyOverrides"]
    assert override["rule"] == "https-webhooks" and override["reason"] == reason
    assert [v["address"] for v in override["violations"]] == [
        "webhooks/ops-alerts",
        "webhooks/batch-events",
    ]


def test_a_blocking_rule_cannot_be_overridden(quickstart: Path) -> None:
    ws = ["-C", str(with_policy(quickstart, HTTPS.format(level="blocking")))]
    result = run(
        "apply", "--auto-approve", "--override-policy", "https-webhooks", "--reason", "x", *ws
    )
    assert result.exit_code == 1
    assert "--override-policy https-webhooks: a blocking rule cannot be overridden" in result.output
    assert "blocking rule https-webhooks at webhooks/ops-alerts" in result.output


def test_a_saved_plan_records_verdicts_and_apply_judges_again(quickstart: Path) -> None:
    ws = ["-C", str(with_policy(quickstart, HTTPS.format(level="advisory")))]
    plan_file = quickstart / "plan.json"
    assert run("plan", "--out", str(plan_file), *ws).exit_code == 0
    saved = json.loads(plan_file.read_text())["policies"]
    assert [v["level"] for v in saved["violations"]] == ["advisory", "advisory"]
    assert list(saved["files"]) == ["policies/rules.yaml"]
    with_policy(quickstart, HTTPS.format(level="mandatory"))  # tightened after the plan
    refused = run("apply", str(plan_file), *ws)
    assert refused.exit_code == 1
    assert "policy files changed since the plan was made" in refused.output
    assert "mandatory rule https-webhooks at webhooks/ops-alerts" in refused.output


SECRET_RULE = """\
rules:
  - name: token-is-secret
    level: advisory
    match: {kinds: [webhooks]}
    deny: has(change.after.headers) && isSecret(change.after.headers['Authorization'])
    message: >-
      'the token is ' + change.after.headers['Authorization']
      + ', set: ' + string(isSet(change.after.headers['Authorization']))
  - name: team-is-sensitive-not-secret
    level: advisory
    match: {kinds: [webhooks]}
    deny: >-
      has(change.after.headers) && isSensitive(change.after.headers['X-Team'])
      && !isSecret(change.after.headers['X-Team'])
    message: "team header: {{ change.after.headers }}"
"""


def test_secrets_are_opaque_to_rules(quickstart: Path) -> None:
    hooks = quickstart / "webhooks.yaml"
    hooks.write_text(
        hooks.read_text().replace(
            "X-Team: quickstart-team",
            "X-Team: quickstart-team\n      Authorization: \"Bearer {{ secret('OPS_TOKEN') }}\"",
        )
    )
    with_policy(quickstart, SECRET_RULE)
    value = "t0k\"en\\'x"  # headers are ASCII: quotes and a backslash
    env = {"OPS_TOKEN": value}
    for fmt in ("text", "json", "markdown"):
        out = run("plan", "--format", fmt, "-C", str(quickstart), env=env).output
        assert value not in out and "t0k" not in out and "quickstart-team" not in out
    document = json.loads(run("plan", "--format", "json", "-C", str(quickstart), env=env).output)
    messages = {v["rule"]: v["message"] for v in document["policies"]["violations"]}
    assert messages["token-is-secret"] == "the token is (sensitive), set: true"
    assert messages["team-is-sensitive-not-secret"].startswith("team header: {")
    assert "(sensitive)" in messages["team-is-sensitive-not-secret"]


def test_a_literal_that_looks_like_a_secret_is_not_one(quickstart: Path) -> None:
    hooks = quickstart / "webhooks.yaml"
    hooks.write_text(hooks.read_text().replace("X-Team: quickstart-team", "X-Team: (secret)"))
    rule = SECRET_RULE.replace("'Authorization'", "'X-Team'")
    document = json.loads(
        run("plan", "--format", "json", "-C", str(with_policy(quickstart, rule))).output
    )
    assert "token-is-secret" not in {v["rule"] for v in document["policies"]["violations"]}


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def test_the_base_branch_judges_and_the_weakening_is_shown(quickstart: Path) -> None:
    with_policy(quickstart, HTTPS.format(level="mandatory"))
    git(quickstart, "init", "-q", "-b", "main")
    git(quickstart, "add", "-A")
    git(quickstart, "commit", "-q", "-m", "base")
    weaker = HTTPS.format(level="advisory").replace("https-webhooks", "https-webhooks-soft")
    with_policy(quickstart, weaker)  # the pull request renames the rule and softens it
    ws = ["-C", str(quickstart)]
    own = json.loads(run("plan", "--format", "json", *ws).output)["policies"]
    assert {v["level"] for v in own["violations"]} == {"advisory"}
    judged = run("plan", "--format", "json", "--policies-from", "main", *ws)
    policies = json.loads(judged.output)["policies"]
    assert {v["rule"] for v in policies["violations"]} == {"https-webhooks"}
    changes = policies["ruleChanges"]
    assert changes["judgedBy"] == "main"
    assert changes["added"] == ["https-webhooks-soft"] and changes["removed"] == ["https-webhooks"]
    assert {v["rule"] for v in changes["wouldPass"]} == {"https-webhooks"}
    assert {v["rule"] for v in changes["wouldViolate"]} == {"https-webhooks-soft"}
    text = run("plan", "--policies-from", "main", *ws).output
    assert "Policy changes: the plan is judged by the policies of main" in text
    assert "removed: https-webhooks" in text
    md = run("plan", "--format", "markdown", "--policies-from", "main", *ws).output
    assert "#### Policy changes" in md
    assert (quickstart / "policies" / "rules.yaml").read_text() == weaker  # untouched
    bad = run("plan", "--policies-from", "no-such-branch", *ws)
    assert bad.exit_code == 1 and "no-such-branch is not a commit" in bad.output


NESTED = """\
rules:
  - name: pairs
    level: mandatory
    scope: plan
    deny: plan.changes.exists(a, plan.changes.exists(b, a.name == b.name && a.kind != b.kind))
    message: "'pairs'"
"""


def test_a_rule_over_its_iteration_budget_is_its_error_not_a_hang(quickstart: Path) -> None:
    pools = "".join(f"  - {{name: p{i}, members: [bot-1, bot-2]}}\n" for i in range(150))
    (quickstart / "many.yaml").write_text("profileGroups:\n" + pools)
    ws = ["-C", str(with_policy(quickstart, NESTED))]
    document = json.loads(run("plan", "--format", "json", *ws).output)["policies"]
    (violation,) = document["violations"]
    assert violation["outcome"] == "error" and violation["address"] is None
    assert "Iteration budget exceeded" in violation["message"]
    refused = run("apply", "--auto-approve", *ws)
    assert refused.exit_code == 1 and "mandatory rule pairs at the plan" in refused.output


def test_policy_files_are_never_workspace_objects(quickstart: Path) -> None:
    before = run("validate", "-C", str(quickstart)).output
    with_policy(quickstart, HTTPS.format(level="advisory"))
    (quickstart / "policies" / "tests").mkdir()
    (quickstart / "policies" / "tests" / "t.yaml").write_text("tests: []\n")
    after = run("validate", "-C", str(quickstart))
    assert after.exit_code == 0
    assert before.splitlines()[0] in after.output
    assert "Valid: 1 policy file, 1 rule." in after.output


def test_validate_reports_a_policy_problem(quickstart: Path) -> None:
    with_policy(quickstart, HTTPS.format(level="mandatory").replace("after.url", "after.ur"))
    result = run("validate", "-C", str(quickstart))
    assert result.exit_code == 1
    assert "policies/rules.yaml:6:26: error: deny: the objects of webhooks have no field ur" in (
        result.output
    )


def test_the_shipped_policies_judge_the_quickstart(quickstart: Path) -> None:
    shutil.copytree(EXAMPLES, quickstart / "policies")
    document = json.loads(run("plan", "--format", "json", "-C", str(quickstart)).output)
    found = {(v["rule"], v["address"]) for v in document["policies"]["violations"]}
    assert found == {
        ("webhook-https-allowed-domains", "webhooks/ops-alerts"),
        ("webhook-https-allowed-domains", "webhooks/batch-events"),
    }
    rules = {r["name"]: r["checked"] for r in document["policies"]["rules"]}
    assert rules["pool-min-members"] == 2 and rules["no-prod-deletes"] == 0  # not prod


def test_a_workspace_test_may_expect_a_policy_verdict(quickstart: Path) -> None:
    with_policy(quickstart, HTTPS.format(level="advisory"))
    (quickstart / "tests" / "policies.yaml").write_text(
        "tests:\n"
        "  - name: http webhooks\n"
        "    steps:\n"
        "      - expect: {policy: https-webhooks}\n"
        "  - name: wrongly expected to pass\n"
        "    steps:\n"
        "      - expect: {policy: https-webhooks, violated: false}\n"
    )
    result = run("test", "-C", str(quickstart), str(quickstart / "tests" / "policies.yaml"))
    assert "PASS tests/policies.yaml: http webhooks" in result.output
    assert "expected the plan not to violate https-webhooks" in result.output
    assert result.exit_code == 1


@pytest.mark.parametrize("fmt", ["text", "junit", "markdown"])
def test_the_shipped_policies_pass_their_tests_with_coverage(fmt: str) -> None:
    result = run("policy", "test", str(EXAMPLES), "--coverage", "--format", fmt)
    assert result.exit_code == 0, result.output
    assert "coverage:" not in result.output


def test_policy_test_reports_a_failure_and_the_coverage_lacking(tmp_path: Path) -> None:
    folder = tmp_path / "policies"
    with_policy(tmp_path, HTTPS.format(level="mandatory"))
    (folder / "tests").mkdir()
    (folder / "tests" / "t.yaml").write_text(
        "tests:\n"
        "  - name: https passes\n"
        "    change: {kind: webhooks, name: a, action: create, after: {url: 'http://x'}}\n"
        "    passes: [https-webhooks]\n"
    )
    result = run("policy", "test", str(folder), "--coverage")
    assert result.exit_code == 1
    assert "FAIL policies/tests/t.yaml: https passes" in result.output
    assert (
        "expected https-webhooks to pass: webhook a must use https, not http://x" in result.output
    )
    assert (
        "coverage: https-webhooks (policies/rules.yaml:2) lacks a violating case and a passing case"
        in (result.output)
    )


def test_a_repository_root_holds_the_policies_and_a_workspace_adds_its_own(
    tmp_path: Path, quickstart: Path
) -> None:
    (tmp_path / "agentform-repository.yaml").write_text("workspaces: [quickstart]\n")
    with_policy(tmp_path, HTTPS.format(level="mandatory"))
    pools = "rules:\n  - {name: pools, level: advisory, match: {kinds: [profilePools]},"
    with_policy(quickstart, pools + " deny: 'true', message: \"'a pool'\"}\n")
    document = json.loads(run("plan", "--format", "json", "-C", str(quickstart)).output)
    rules = {r["name"]: r["file"] for r in document["policies"]["rules"]}
    assert rules == {
        "https-webhooks": "policies/rules.yaml",
        "pools": "quickstart/policies/rules.yaml",
    }
    validated = run("validate", "-C", str(quickstart))
    assert "Valid: 2 policy files, 2 rules." in validated.output


def test_markdown_shows_twenty_violations_of_a_level_and_counts_the_rest(quickstart: Path) -> None:
    groups = "".join(f"  - {{name: g{i}, members: [bot-1]}}\n" for i in range(30))
    (quickstart / "groups.yaml").write_text("profileGroups:\n" + groups)
    rule = (
        "rules:\n  - {name: any, level: advisory, match: {kinds: [profileGroups]}, deny: 'true', "
    )
    with_policy(quickstart, rule + "message: \"'group ' + change.name\"}\n")
    markdown = run("plan", "--format", "markdown", "-C", str(quickstart)).output
    assert markdown.count("advisory rule any violated at") == 20
    assert "**11 more advisory violations**: to see all of them, run `agentform plan`" in markdown
    text = run("plan", "-C", str(quickstart)).output
    assert text.count("advisory rule any violated at") == 31  # the terminal shows all


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (
            "{kind: webhooks, name: a, action: create, after: {urll: 'http://x'}}",
            "change.after.urll: webhooks has no field urll (did you mean 'url'?)",
        ),
        (
            "{kind: webhooks, name: a, action: delete, before: {url: 'https://x', nmae: a}}",
            "change.before.nmae: webhooks has no field nmae (did you mean 'name'?)",
        ),
        (
            "{kind: webhook, name: a, action: create, after: {url: 'https://x'}}",
            "change.kind: no kind webhook (did you mean 'webhooks'?)",
        ),
    ],
)
def test_a_policy_test_naming_a_field_its_kind_lacks_is_an_error_not_a_vacuous_pass(
    tmp_path: Path, change: str, said: str
) -> None:
    """A rule guarding with has(change.after.url) passed a test of `urll`: it tested nothing."""
    folder = tmp_path / "policies"
    with_policy(tmp_path, HTTPS.format(level="mandatory"))
    (folder / "tests").mkdir()
    (folder / "tests" / "t.yaml").write_text(
        f"tests:\n  - name: typo\n    change: {change}\n    passes: [https-webhooks]\n"
    )
    result = run("policy", "test", str(folder))
    assert result.exit_code == 1, result.output
    assert "PASS" not in result.output
    assert said in result.output


@pytest.mark.parametrize("command", ["plan", "apply"])
def test_plan_and_apply_say_a_workspace_and_a_policy_problem_together(
    quickstart: Path, command: str
) -> None:
    """As validate does: plan said the workspace's, and the policy's after it was mended."""
    with_policy(quickstart, HTTPS.format(level="mandatory").replace("after.url", "after.ur"))
    (quickstart / "pools.yaml").write_text("profilePools:\n  - name: '{{ vars.nowhere }}'\n")
    args = ("--auto-approve",) if command == "apply" else ()
    result = run(command, *args, "-C", str(quickstart))
    assert result.exit_code == 1
    assert "variable 'nowhere' is not set" in result.output
    assert "policies/rules.yaml:6:26: error: deny: the objects of webhooks have no field ur" in (
        result.output
    )
