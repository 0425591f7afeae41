"""A workspace of a repository (agentform-repository.yaml) may name files anywhere
under the repository's root, and nothing outside it: includes, imports, var
files, itemsFiles and test seeds, by the one rule of core/bounds.py. It inherits
the repository's defaults unless it sets its own."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentform.config.loader import load_workspace
from agentform.config.repository_file import find_repository, glob_matches
from agentform.core.errors import DiagnosticsError
from agentform.testing.files import load_tests
from tests.repository.layout import company, write


def problems(root: Path, environment: str | None = "prod") -> list[str]:
    with pytest.raises(DiagnosticsError) as info:
        load_workspace(root, environment=environment)
    return [d.render() for d in info.value.diagnostics]


def test_a_team_reads_the_shared_include_macros_and_var_file(tmp_path: Path) -> None:
    company(tmp_path)
    for environment, region in (("staging", "eu-staging"), ("prod", "eu")):
        loaded = load_workspace(tmp_path / "teams/payments", environment=environment)
        dumped = [d.model.model_dump() for d in loaded.declared["profilePools"]]
        pools = {pool["name"]: pool["members"] for pool in dumped}
        assert pools == {
            "payments-main": ["payments-bot-1", "payments-bot-2"],
            "payments-alerts": [f"{region}-bot"],
        }


def test_the_same_files_without_a_repository_file_are_refused_as_today(tmp_path: Path) -> None:
    company(tmp_path)
    (tmp_path / "agentform-repository.yaml").unlink()
    found = problems(tmp_path / "teams/payments")
    assert found[0] == (
        "agentform.yaml: error: environments.prod.varFiles: "
        "'../../common/prod.vars.yaml' leads outside the workspace: not allowed in workspace files"
    )


def test_a_workspace_the_globs_do_not_name_is_not_of_the_repository(tmp_path: Path) -> None:
    company(tmp_path)
    write(tmp_path, {"agentform-repository.yaml": "workspaces: [apps/*]\n"})
    assert "leads outside the workspace" in problems(tmp_path / "teams/payments")[0]


@pytest.mark.parametrize("include", ["../../../outside.j2", "/etc/hostname", "../../link/hostname"])
def test_an_include_stays_under_the_repository_root(tmp_path: Path, include: str) -> None:
    repository = company(tmp_path / "repo")
    (tmp_path / "outside.j2").write_text("  - name: payments-stolen\n")
    os.symlink("/etc", repository / "link")
    write(repository, {"teams/payments/extra.yaml": f"{{% include '{include}' %}}\n"})
    found = problems(repository / "teams/payments")
    assert found == [
        f"extra.yaml:1:1: error: '{include}' leads outside the repository: "
        "not allowed in workspace files"
    ]


def test_a_shared_file_error_is_at_its_own_line_and_names_the_workspace(tmp_path: Path) -> None:
    company(tmp_path)
    write(
        tmp_path,
        {
            "common/alerts.j2": "  - name: {{ workspace }}-alerts\n"
            "    members: [{{ vars.regoin }}]\n"
        },
    )
    found = problems(tmp_path / "teams/support")
    assert found == [
        "../../common/alerts.j2:2:1: error: template error: variable 'regoin' "
        "is not set (did you mean 'region'?) (read by workspace teams/support)"
    ]


def test_items_files_and_seeds_may_be_shared(tmp_path: Path) -> None:
    company(tmp_path)
    write(
        tmp_path,
        {
            "common/items.csv": "inputs.n\n1\n2\n",
            "teams/payments/batches.yaml": (
                "batches:\n  - name: payments-nightly\n    agent: support-agent\n"
                "    startAt: 2030-01-01T00:00:00Z\n"
                "    config: {type: timeBatching, batchSize: 1, batchInterval: 60}\n"
                "    itemsFile: ../../common/items.csv\n"
            ),
        },
    )
    root = tmp_path / "teams/payments"
    loaded = load_workspace(root, environment="prod")
    (batch,) = loaded.declared["batches"]
    items = batch.model.model_dump()["items"]
    assert [item["inputs"] for item in items] == [{"n": "1"}, {"n": "2"}]
    (run,) = load_tests(loaded, [root / "tests/smoke.yaml"])
    assert run.seed.organizations[0].name == "company"


def test_a_seed_outside_the_repository_is_refused(tmp_path: Path) -> None:
    repository = company(tmp_path / "repo")
    (tmp_path / "seed.yaml").write_text("organizations: []\n")
    write(
        repository,
        {
            "teams/payments/tests/smoke.yaml": "seed: ../../../../seed.yaml\n"
            "tests:\n  - name: t\n    steps: [{advance: 1s}]\n"
        },
    )
    root = repository / "teams/payments"
    with pytest.raises(DiagnosticsError) as info:
        load_tests(load_workspace(root, environment="prod"), [root / "tests/smoke.yaml"])
    assert [d.render() for d in info.value.diagnostics] == [
        "tests/smoke.yaml:1:1: error: seed '../../../../seed.yaml' leads outside the repository: "
        "not allowed in workspace files"
    ]


def test_defaults_are_inherited_unless_the_workspace_sets_its_own(tmp_path: Path) -> None:
    company(tmp_path)
    write(
        tmp_path,
        {
            "teams/support/region.yaml": (
                "profilePools:\n  - name: support-{{ env('COMPANY_REGION') }}\n"
            )
        },
    )
    env = {"COMPANY_REGION": "eu"}
    support = load_workspace(tmp_path / "teams/support", environment="prod", environ=env)
    assert support.settings.protect == {"profilePools": ["keep-*"]}
    assert "support-eu" in [d.model.model_dump()["name"] for d in support.declared["profilePools"]]
    root = tmp_path / "teams/payments/agentform.yaml"
    root.write_text(root.read_text() + "protect: {}\nallowEnv: []\n")
    write(
        tmp_path,
        {
            "teams/payments/region.yaml": (
                "profilePools:\n  - name: payments-{{ env('COMPANY_REGION') }}\n"
            )
        },
    )
    with pytest.raises(DiagnosticsError) as info:
        load_workspace(tmp_path / "teams/payments", environment="prod", environ=env)
    assert "COMPANY_REGION" in info.value.diagnostics[0].summary


def test_a_bad_repository_file_is_reported_at_its_line(tmp_path: Path) -> None:
    write(
        tmp_path, {"agentform-repository.yaml": "workspaces: [teams/*]\ndefaults:\n  protekt: {}\n"}
    )
    with pytest.raises(DiagnosticsError) as info:
        find_repository(tmp_path / "teams" / "a")
    assert [d.render() for d in info.value.diagnostics] == [
        "agentform-repository.yaml:3:3: error: defaults.protekt: unknown key "
        "(did you mean 'protect'?)"
    ]


@pytest.mark.parametrize(
    ("glob", "name", "expected"),
    [
        ("teams/*", "teams/payments", True),
        ("teams/*", "teams/payments/sub", False),
        ("teams/**", "teams/payments/sub", True),
        ("**/ws", "a/b/ws", True),
        ("teams/p*", "teams/support", False),
    ],
)
def test_workspace_globs_match_directories_part_by_part(
    glob: str, name: str, expected: bool
) -> None:
    assert glob_matches(glob, name) is expected


@pytest.mark.parametrize(
    ("glob", "said"),
    [
        ("../elsewhere/*", "a workspace glob names directories under the root"),
        ("teams//x", "a workspace glob names directories under the root"),
        ("**/**/**/ws", "a workspace glob holds one ** at most"),
    ],
)
def test_a_glob_out_of_the_root_or_walking_it_over_and_over_is_refused(
    tmp_path: Path, glob: str, said: str
) -> None:
    write(tmp_path, {"agentform-repository.yaml": f"workspaces: [teams/*, '{glob}']\n"})
    with pytest.raises(DiagnosticsError) as info:
        find_repository(tmp_path)
    assert [d.render() for d in info.value.diagnostics] == [
        f"agentform-repository.yaml:1:23: error: workspaces.1: {said}"
    ]
