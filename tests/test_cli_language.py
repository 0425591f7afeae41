"""The file language through the command line on the embedded service (issue 18):
`--var` values read as YAML, included files, typed CSV columns, completed batches."""

from __future__ import annotations

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
