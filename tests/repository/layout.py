"""A repository of two teams x two environments, written as the issue's company
keeps it: each team a workspace under teams/, one shared include of alert pools,
a shared macro library, a shared var file and a shared test seed."""

from __future__ import annotations

from pathlib import Path

ORG = "0b7f3c1e-0000-4000-8000-000000000001"  # prod's; the test seed's organization
STAGING_ORG = "0b7f3c1e-0000-4000-8000-000000000002"

REPOSITORY = """\
workspaces: [teams/*]
defaults:
  endpoint: https://agents.example.com/agents/v2
  allowEnv: [COMPANY_REGION]
  protect: {profilePools: [keep-*]}
"""


def team(name: str) -> dict[str, str]:
    """One team's files, relative to the repository's root."""
    return {
        f"teams/{name}/agentform.yaml": (
            f"workspace: {name}\n"
            f"owns: {{profilePools: ['{name}-*'], batches: ['support-agent/{name}-*']}}\n"
            "environments:\n"
            "  staging:\n"
            f"    organizationId: {STAGING_ORG}\n"
            "    varFiles: [../../common/staging.vars.yaml]\n"
            "  prod:\n"
            f"    organizationId: {ORG}\n"
            "    varFiles: [../../common/prod.vars.yaml]\n"
        ),
        f"teams/{name}/pools.yaml": (
            "{% import '../../common/macros.j2' as m %}\n"
            "profilePools:\n"
            f"  - name: {name}-main\n"
            f"    members: {{{{ m.members('{name}') }}}}\n"
            "{% include '../../common/alerts.j2' %}\n"
        ),
        f"teams/{name}/tests/smoke.yaml": (
            "seed: ../../../common/seed.yaml\n"
            "tests:\n  - name: smoke\n    steps:\n      - expect: {plan: empty}\n"
        ),
    }


SHARED = {
    "common/alerts.j2": (
        "  - name: {{ workspace }}-alerts\n    members: [{{ vars.region }}-bot]\n"
    ),
    "common/macros.j2": (
        "{% macro members(team) %}[{{ team }}-bot-1, {{ team }}-bot-2]{% endmacro %}\n"
    ),
    "common/staging.vars.yaml": "region: eu-staging\n",
    "common/prod.vars.yaml": "region: eu\n",
    "common/seed.yaml": (
        f"organizations:\n  - name: company\n    id: {ORG}\n"
        "    apiKeys: [{name: admin, key: company-admin-key-1, role: admin}]\n"
    ),
}


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def company(root: Path, teams: tuple[str, ...] = ("payments", "support")) -> Path:
    files = {"agentform-repository.yaml": REPOSITORY, **SHARED}
    for name in teams:
        files.update(team(name))
    return write(root, files)
