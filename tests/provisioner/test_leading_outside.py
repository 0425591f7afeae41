"""Every path a workspace writes or holds that leads out of its bounds (a symlink
inside the workspace to a file outside it, here) is refused in one wording, naming
the path as written, never where it leads: an include, a workspace file, an
itemsFile, a var file, a test file, a test's seed, a policy file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentform.cli.main import cli
from tests.provisioner.harness import write_workspace

ROOT = "workspace: w\nendpoint: local\n"
BATCH = (
    "batches:\n  - name: b\n    agent: support-agent\n    startAt: 2030-01-01T00:00:00Z\n"
    "    config: {type: timeBatching, batchSize: 1, batchInterval: 60}\n"
    "    itemsFile: link/items.csv\n"
)
TEST = "tests: [{name: t, steps: [{advance: 1s}]}]\n"


def refused(written: str, within: str = "the workspace") -> str:
    return f"'{written}' leads outside {within}: not allowed in workspace files"


# (files of the workspace, the link to the outside directory, the problem shown)
CASES = {
    "include": (
        {"pools.yaml": "{% include 'link/pools.j2' %}\n"},
        "link",
        "pools.yaml:1:1: error: " + refused("link/pools.j2"),
    ),
    "workspace file": ({}, "pools.yaml", "pools.yaml: error: " + refused("pools.yaml")),
    "itemsFile": (
        {"b.yaml": BATCH},
        "link",
        "b.yaml:6:16: error: itemsFile " + refused("link/items.csv"),
    ),
    "var file": (
        {"agentform.yaml": ROOT + "environments: {a: {varFiles: [link/v.yaml]}}\n"},
        "link",
        "agentform.yaml: error: environments.a.varFiles: " + refused("link/v.yaml"),
    ),
    "test file": ({}, "tests/q.yaml", "tests/q.yaml: error: " + refused("tests/q.yaml")),
    "seed": (
        {"tests/t.yaml": "seed: link/seed.yaml\n" + TEST},
        "tests/link",
        "tests/t.yaml:1:1: error: seed " + refused("link/seed.yaml"),
    ),
    "policy file": (
        {},
        "policies/p.yaml",
        "policies/p.yaml: error: " + refused("policies/p.yaml", "policies/"),
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_a_path_leading_outside_is_refused_in_one_wording(tmp_path: Path, case: str) -> None:
    files, link, problem = CASES[case]
    outside = tmp_path / "outside"
    outside.mkdir()
    for name in ("pools.j2", "items.csv", "v.yaml", "seed.yaml", "p.yaml"):
        (outside / name).write_text("stolen: secret-value\n")
    (outside / "pools.yaml").write_text("profilePools: [{name: stolen}]\n")
    (outside / "q.yaml").write_text(TEST)
    ws = write_workspace(tmp_path / "ws", {"agentform.yaml": ROOT, **files})
    (ws / link).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside if link.endswith("link") else outside / Path(link).name, ws / link)
    result = CliRunner().invoke(cli, ["validate", "-C", str(ws)], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    assert problem in result.output.splitlines(), result.output
    assert "stolen" not in result.output and str(outside) not in result.output
