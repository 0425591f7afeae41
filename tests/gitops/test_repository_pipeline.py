"""examples/gitops on a repository of two teams x two environments sharing one
include (examples/gitops/repository), run job by job as GitHub runs its workflows:
a pull request plans and tests only the pairs it affects, one comment; after the
merges, each pair applies its own reviewed plan, another team's merge in between or
not; a stale pair waits for its environment's approval."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.gitops.fake_github import State
from tests.gitops.pipeline_repo import READ, WRITE, TeamsRepo
from tests.gitops.test_pipeline import BIN
from tests.gitops.test_pipeline import github as github  # the fake GitHub, a fixture

pytestmark = [pytest.mark.pipeline, pytest.mark.slow]

PAYMENTS = (
    "teams/payments/pools.yaml",
    "members: [bot-1, bot-2]",
    "members: [bot-1, bot-2, bot-3]",
)
PAYMENTS_2 = (
    "teams/payments/refunds.yaml",
    "",
    "profilePools:\n  - name: payments-refunds\n    members: [bot-2, bot-3]\n",
)
SUPPORT = ("teams/support/pools.yaml", "members: [bot-1, bot-2]", "members: [bot-2, bot-3]")
SHARED = ("shared/alerts.j2", "members: [bot-2, bot-3]", "members: [bot-1, bot-2, bot-3]")
ALL = {
    "teams/payments staging",
    "teams/payments prod",
    "teams/support staging",
    "teams/support prod",
}


@pytest.fixture
def repo(tmp_path: Path, github: tuple[str, State]) -> TeamsRepo:
    api, state = github
    return TeamsRepo(tmp_path / "repo", api, state)


def test_a_pull_request_of_one_team_plans_and_tests_only_its_pairs(repo: TeamsRepo) -> None:
    pr = repo.plan_pull_request(7, [PAYMENTS])
    assert set(pr.pairs) == {"teams/payments staging", "teams/payments prod"}
    assert all(r.returncode == 0 for r in pr.pairs.values()), pr.pairs
    assert [c["body"] for c in repo.state.comments_on(7)] == [pr.comment], "one comment"
    assert pr.comment.startswith("<!-- agentform:pull-request -->\n")
    assert "| `teams/payments` staging | 2 | 0 | 0 | ✅ agentform test: 1 passed, 0 failed" in (
        pr.comment
    )
    assert "<!-- agentform:plan workspace=teams/payments environment=prod -->" in pr.comment
    assert "support" not in pr.comment
    for pair, done in pr.pairs.items():  # each job loads its own pair, not the repository
        workspace, environment = pair.split()
        assert f"list --all {workspace} --env {environment} --format json" in done.stderr
        assert "list --all --format" not in done.stderr
    names = {a["name"] for a in repo.state.artifacts}
    assert names == {
        "agentform-affected", "agentform-plan-teams-payments--staging",
        "agentform-plan-teams-payments--prod",
    }  # fmt: skip

    again = repo.plan_pull_request(8, [PAYMENTS_2, SUPPORT])  # another push: the comment is updated
    assert set(again.pairs) == ALL


def test_a_change_to_the_shared_include_plans_both_teams(repo: TeamsRepo) -> None:
    pr = repo.plan_pull_request(7, [SHARED])
    assert set(pr.pairs) == ALL
    assert pr.comment.count("<!-- agentform:plan workspace=teams/") == 4


def test_nothing_affected_is_one_line(repo: TeamsRepo) -> None:
    pr = repo.plan_pull_request(7, [("NOTES.md", "", "# notes\n")])
    assert pr.matrix == [] and pr.pairs == {}
    assert pr.comment.splitlines() == [
        "<!-- agentform:pull-request -->",
        "agentform: this pull request affects no workspace x environment pair; "
        "nothing to plan or test.",
    ]


def test_two_teams_merging_one_after_the_other_apply_without_approval(repo: TeamsRepo) -> None:
    """Both pull requests planned on the same main and merged before either apply ran:
    each run plans main's HEAD (both merges), and finds each pair's reviewed plan in
    its own team's pull request, passing over the other team's newer merge."""
    payments = repo.plan_pull_request(7, [PAYMENTS])
    support = repo.plan_pull_request(8, [SUPPORT])
    first = repo.merge(payments.number)
    second = repo.merge(support.number)
    for before, run_id, team, number in (
        (first, 41, "payments", "7"),
        (second, 42, "support", "8"),
    ):
        done = repo.deploy(before, run_id)
        assert set(done["prepared"]) == {f"teams/{team} staging", f"teams/{team} prod"}
        assert {(p["workspace"], p["verdict"], p["pr"]) for p in done["to_apply"]} == {
            (f"teams/{team}", "reviewed", number)
        }, {k: v.stderr for k, v in done["prepared"].items()}
        gates = {p["environment"]: p["github_environment"] for p in done["to_apply"]}
        assert gates == {"staging": "staging", "prod": f"{team}-prod"}
        for pair in done["to_apply"]:
            applied = repo.apply_pair(pair, done["run"])
            assert applied.returncode == 0, applied.stderr
        assert repo.pair_in_sync(team, "staging") and repo.pair_in_sync(team, "prod")
    assert len(repo.comments(7, "apply")) == 2, "an apply report per pair, none overwritten"
    assert not repo.comments(7, "replan") and not repo.comments(8, "replan")


def test_a_stale_pair_waits_for_its_environments_approval(repo: TeamsRepo) -> None:
    one = repo.plan_pull_request(7, [PAYMENTS])
    two = repo.plan_pull_request(8, [PAYMENTS_2])  # planned on the same main: stale once 7 is in
    before = repo.merge(one.number)
    repo.merge(two.number)
    done = repo.deploy(before, 51)
    verdicts = {(p["environment"], p["verdict"], p["pr"]) for p in done["to_apply"]}
    assert verdicts == {("staging", "unreviewed", "8"), ("prod", "unreviewed", "8")}
    replans = repo.comments(8, "replan")
    assert len(replans) == 2
    assert any("`payments-prod`" in r and "workspace files on main differ" in r for r in replans)
    [prod] = [p for p in done["to_apply"] if p["environment"] == "prod"]
    refused = repo.apply_pair(prod, done["run"])
    assert refused.returncode == 1
    assert "nobody approved this run's deployment to `payments-prod`" in refused.stderr
    assert not repo.pair_in_sync("payments", "prod")
    repo.state.approve(51, "payments-prod")
    applied = repo.apply_pair(prod, done["run"])
    assert applied.returncode == 0, applied.stderr
    assert repo.pair_in_sync("payments", "prod")


ONE_MEMBER = ("teams/payments/pools.yaml", "members: [bot-1, bot-2]", "members: [bot-1]")
WEAKEN = ("policies/pool-members.yaml", "level: mandatory", "level: advisory")
OVERRIDE = (
    "Shrinking on purpose.\n\nagentform-override: pool-min-members: bot-2 moves to refunds ü\n"
)


def test_a_violating_pull_request_is_judged_by_the_base_branchs_policies(repo: TeamsRepo) -> None:
    """The pull request also weakens the rule it breaks: the plan is still judged by
    main's rule (mandatory), the pair's job fails, and the comment shows the violation
    at its field and the policy change."""
    pr = repo.plan_pull_request(7, [ONE_MEMBER, WEAKEN])
    assert {k: r.returncode for k, r in pr.pairs.items()} == {
        "teams/payments staging": 1, "teams/payments prod": 1,
    }  # fmt: skip
    [row] = [line for line in pr.comment.splitlines() if line.startswith("| `teams/payments` prod")]
    assert row.endswith("| ❌ 1 mandatory |"), row
    assert "pool-min-members" in pr.comment and "profilePools/payments-checkout" in pr.comment
    assert "members" in pr.comment and "would have 1 member(s)" in pr.comment
    assert "Policy changes" in pr.comment and "advisory" in pr.comment


def test_a_mandatory_violation_applies_with_an_approval_and_a_recorded_reason(
    repo: TeamsRepo,
) -> None:
    pr = repo.plan_pull_request(7, [ONE_MEMBER], body=OVERRIDE)
    assert all(r.returncode == 1 for r in pr.pairs.values()), "it fails the plan check"
    before = repo.merge(7)
    done = repo.deploy(before, 61)
    [prod] = [p for p in done["to_apply"] if p["environment"] == "prod"]
    assert prod["verdict"] == "unreviewed", "a failed plan check vouches for nothing"
    refused = repo.apply_pair(prod, done["run"])
    assert refused.returncode == 1 and "nobody approved" in refused.stderr
    repo.state.approve(61, "payments-prod")
    applied = repo.apply_pair(prod, done["run"])
    assert applied.returncode == 0, applied.stderr + applied.stdout
    [report] = [r for r in repo.comments(7, "apply") if "environment=prod" in r.splitlines()[0]]
    assert "pool-min-members" in report and "bot-2 moves to refunds ü" in report


def test_a_comment_over_githubs_limit_says_where_the_rest_is(repo: TeamsRepo) -> None:
    """Four pairs whose plans are 20,000 characters each: the comment keeps the table
    and the sections that fit, names those left out, and the whole text is in the job
    summary and comment.md (the artifact agentform-comment)."""
    pairs = [("teams/payments", "prod"), ("teams/payments", "staging"),
             ("teams/support", "prod"), ("teams/support", "staging")]  # fmt: skip
    out = repo.out
    out.mkdir(parents=True, exist_ok=True)
    listed = [{"workspace": w, "environment": e} for w, e in pairs]
    (out / "affected.json").write_text(json.dumps(listed))
    for workspace, env in pairs:
        slug = out / f"{workspace.replace('/', '-')}--{env}"
        slug.mkdir()
        plan = {"ok": True, "summary": {"create": 1000, "update": 0, "delete": 0}}
        tests = {"ok": True, "line": "agentform test: 1 passed, 0 failed"}
        (slug / "result.json").write_text(json.dumps({"tests": tests, "plan": plan}))
        (slug / "plan.md").write_text("<!-- x -->\n" + f'pool of {workspace} ü \\" \n' * 600)
    posted = repo.script("pr_comment.py", PR_NUMBER="9")
    assert posted.returncode == 0, posted.stderr
    [comment] = repo.comments(9, "pull-request")
    assert len(comment) <= 65_536
    assert comment.count("| 1000 | 0 | 0 |") == 4, "the table has every pair"
    assert comment.count("<details><summary>teams/") == 3
    assert "The sections of teams/support staging did not fit in this comment" in comment
    whole = (out / "comment.md").read_text()
    assert len(whole) > 65_536 and whole.count("<details><summary>teams/") == 4
    assert whole in (repo.root / "summary.md").read_text()


def test_drift_is_one_issue_per_pair_closed_when_gone(repo: TeamsRepo) -> None:
    listed = repo.job("matrix.py", "all")
    assert listed.returncode == 0, listed.stderr
    matrix = json.loads(repo.outputs()["matrix"])["include"]
    assert {(p["workspace"], p["environment"]) for p in matrix} == {
        tuple(p.split(" ")) for p in ALL
    }
    for pair in matrix:  # nothing applied yet: every pair drifts (its pools are missing)
        env = pair["environment"]
        done = repo.job("drift.py", pair["workspace"], env, AGENTFORM_READ_API_KEY=READ[env])
        assert done.returncode == 0, done.stderr
    issues = {i["title"]: i for i in repo.state.issues.values() if i["state"] == "open"}
    assert sorted(issues) == sorted(f"Drift in agentform {p}" for p in ALL)
    assert issues["Drift in agentform teams/support prod"]["body"].startswith(
        "<!-- agentform:drift workspace=teams/support environment=prod -->"
    )
    for env in ("staging", "prod"):  # support's drift is gone in prod only
        subprocess.run(
            [str(BIN / "agentform"), "-C", str(repo.root / "teams" / "support"), "apply",
             "--env", env, "--auto-approve"] if env == "prod" else ["true"],
            env={"PATH": f"{BIN}:/usr/bin:/bin", "PROD_AGENTFORM_API_KEY": WRITE["prod"]},
            check=True, capture_output=True,
        )  # fmt: skip
    gone = repo.job("drift.py", "teams/support", "prod", AGENTFORM_READ_API_KEY=READ["prod"])
    assert gone.returncode == 0, gone.stderr
    still = {i["title"] for i in repo.state.issues.values() if i["state"] == "open"}
    assert still == {f"Drift in agentform {p}" for p in ALL} - {
        "Drift in agentform teams/support prod"
    }
