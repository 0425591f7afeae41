"""The file language through the command line on the embedded service (issue 18):
`--var` values read as YAML, included files, typed CSV columns, completed batches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agentform.cli.main import cli
from tests.provisioner.harness import write_workspace

ROOT = "workspace: lang\nendpoint: local\n"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def pools(tmp_path: Path) -> Path:
    text = (
        "profilePools:\n  - name: pool-{{ vars.n + 1 }}\n    members: {{ vars.members | tojson }}\n"
    )
    return write_workspace(tmp_path / "ws", {"agentform.yaml": ROOT, "pools.yaml": text})


def test_a_var_is_read_as_a_yaml_value(pools: Path) -> None:
    result = run("plan", "-C", str(pools), "--var", "n=3", "--var", "members=[bot-1, bot-2]")
    assert result.exit_code == 0, result.output
    assert "+ profilePools/pool-4  create" in result.output
    assert 'members: ["bot-1", "bot-2"]' in result.output


def test_a_quoted_var_stays_text(pools: Path) -> None:
    result = run("plan", "-C", str(pools), "--var", 'n="3"', "--var", "members=[bot-1]")
    assert result.exit_code == 1
    assert 'pools.yaml:2:1: error: template error: can only concatenate str (not "int") to str' in (
        result.output
    )


@pytest.mark.parametrize(
    ("var", "said"),
    [
        (
            "members=[bot-1",
            "the value of members is not a YAML value: expected ',' or ']', but got "
            "'<stream end>' (to pass it as text, quote it: --var 'members=\"[bot-1\"')",
        ),
        ("title=Note: hi", "the value of title is a YAML block, not one value"),
        ("deep=" + "[" * 100 + "]" * 100, "the value of deep is not a YAML value: nesting deeper"),
        ("big=" + "a" * 70_000, "the value of big is longer than 65,536 characters"),
    ],
)
def test_a_var_that_is_not_one_yaml_value_is_an_error_naming_it(
    pools: Path, var: str, said: str
) -> None:
    result = run("validate", "-C", str(pools), "--var", var)
    assert result.exit_code == 1 and said in result.output, result.output
    assert "Traceback" not in result.output


def test_words_and_empty_values_stay_text(pools: Path) -> None:
    from agentform.cli.conventions import _parse_var

    assert _parse_var(None, None, ("a=", "b=yes", "c=é ü", "d=~", "e={k: 1}")) == {
        "a": "",
        "b": "yes",
        "c": "é ü",
        "d": None,
        "e": {"k": 1},
    }


BATCH = """\
batches:
  - name: refunds
    agent: checkout-agent
    startAt: "2030-01-01T02:00:00Z"
    config: {type: timeBatching, batchSize: 10, batchInterval: 60}
    itemsFile: refunds.csv
"""


def test_typed_csv_columns_show_typed_in_the_plan(tmp_path: Path) -> None:
    csv = "order,amount:number,urgent:boolean\nA-1,120.5,true\n"
    files = {"agentform.yaml": ROOT, "batches.yaml": BATCH, "refunds.csv": csv}
    ws = write_workspace(tmp_path / "ws", files)
    result = run("plan", "-C", str(ws), "--format", "json")
    assert result.exit_code == 0, result.output
    (change,) = json.loads(result.output)["changes"]
    assert change["after"]["items"] == [
        {"inputs": {"order": "A-1", "amount": 120.5, "urgent": True}}
    ]


def test_a_typed_cell_that_does_not_parse_is_an_error_at_its_cell(tmp_path: Path) -> None:
    csv = "order,amount:number\nA-1,12O\n"
    files = {"agentform.yaml": ROOT, "batches.yaml": BATCH, "refunds.csv": csv}
    result = run("validate", "-C", str(write_workspace(tmp_path / "ws", files)))
    assert result.exit_code == 1
    assert (
        "refunds.csv:2:5: error: itemsFile refunds.csv: row 1, column amount:number: "
        "'12O' is not a number"
    ) in result.output


def test_an_included_file_reports_at_its_own_line_through_the_cli(tmp_path: Path) -> None:
    team = 'profilePools:\n{% include "shared/pools.yaml" %}\n'
    shared = "  - name: shared-é\n    members: [bot-1]\n  - name: b\n    membrs: [bot-2]\n"
    files = {"agentform.yaml": ROOT, "team/pools.yaml": team, "shared/pools.yaml": shared}
    ws = write_workspace(tmp_path / "ws", files)
    result = run("validate", "-C", str(ws))
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == (
        "shared/pools.yaml:4:5: error: profilePools.1.membrs: unknown key (did you mean 'members'?)"
    )
    (ws / "shared/pools.yaml").write_text(shared.replace("membrs", "members"))
    planned = run("plan", "-C", str(ws))
    assert planned.exit_code == 0, planned.output
    assert "+ profilePools/shared-é  create" in planned.output
