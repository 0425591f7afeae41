"""The budget (core/budget.py): whatever a workspace or test file makes agentform
compute stays under one bound of memory and time, and past it is one diagnostic
at the file (and line), never a crash, a MemoryError or a swap storm. Each input
here took gigabytes or minutes before the budget (issue 27)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentform.cli.main import cli
from agentform.config.loader import load_workspace
from agentform.core import bounds
from agentform.core.budget import BudgetExceeded, Limits, metered
from agentform.core.errors import DiagnosticsError
from agentform.service.executions.script import Script, ScriptError, render
from tests.provisioner.harness import write_workspace

MEMORY = f"needs more than the {bounds.BUDGET_MEMORY >> 20} MiB of memory a file may use"


def problems(ws: Path, expression: str) -> list[str]:
    pools = f'vaultTemplates:\n  - name: t\n    kind: login\n    description: "{expression}"\n'
    write_workspace(ws, {"agentform.yaml": "workspace: w\n", "vault.yaml": pools})
    with pytest.raises(DiagnosticsError) as info:
        load_workspace(ws, environ={})
    return [d.render() for d in info.value.diagnostics]


@pytest.mark.parametrize(
    "expression",
    [
        "{% set s='x'*1000000 %}{{ range(3000)|join(s)|length }}",
        "{% set s='x'*1000000 %}{{ range(100000)|join(s)|length }}",
        "{{ '{0:{1}}'.format('a', 2500000000)|length }}",
        "{{ ('\\t'*1000000).expandtabs(3000)|length }}",
    ],
)
def test_a_value_past_the_memory_budget_is_one_diagnostic_at_its_line(
    ws: Path, expression: str
) -> None:
    assert problems(ws, expression) == [f"vault.yaml:4:1: error: {MEMORY} (the budget)"]


def test_the_budget_is_the_floor_under_a_slow_growth(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A list grown one element at a time (766 MB and 9 s before): stopped at the
    budget, here lowered so the test takes a moment."""
    monkeypatch.setattr(bounds, "BUDGET_MEMORY", 64 << 20)
    found = problems(ws, "{{ [1,2]|slice(10000000)|list|length }}")
    assert found == [
        "vault.yaml:4:1: error: needs more than the 64 MiB of memory a file may use (the budget)"
    ]


@pytest.mark.parametrize(
    ("expression", "what"),
    [
        ("{{ 'a'|attr('upper') }}", "a function"),
        ("{{ env }}", "a function"),
        ("{{ 'at ' ~ secret }}", "a function"),
        ("{{ '%s' % range }}", "a function"),
        ("{{ [cycler]|join }}", "a type object"),
        ("{{ [env]|map('string')|join }}", "a function"),
        ("{{ [1]|map('string') }}", "a generator object"),
        ("{{ {'a': 1}.items() }}", "a dict_items object"),
    ],
)
def test_a_value_that_is_not_data_is_an_error_at_its_line(
    ws: Path, expression: str, what: str
) -> None:
    assert problems(ws, expression) == [
        f"vault.yaml:4:1: error: writing {what} as text (only data is written): "
        "not allowed in workspace files"
    ]


def test_data_is_still_written(ws: Path) -> None:
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\n",
            "pools.yaml": "profilePools:\n"
            "  - name: \"{{ {'a': 1}.items()|list|length }}-{{ [1, 'b']|join('-') }}-"
            "{{ [2, 3]|map('string')|join }}-{{ range(2)|select('odd')|list|string }}\"\n",
        },
    )
    declared = load_workspace(ws, environ={}).declared["profilePools"]
    assert [d.model.model_dump()["name"] for d in declared] == ["1-1-b-23-[1]"]


def test_the_budget_stops_processor_time_and_gives_the_limit_back() -> None:
    """A computation past the processor budget is stopped between two instructions; the
    process's own limits are as they were afterwards."""
    import resource

    before = resource.getrlimit(resource.RLIMIT_AS)
    with (
        pytest.raises(BudgetExceeded, match=r"longer than the 0\.2 s of processor time"),
        metered(Limits(cpu_seconds=0.2)),
    ):
        while True:
            pass
    assert resource.getrlimit(resource.RLIMIT_AS) == before


SCRIPTS = [
    (
        "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}x",
        "runs longer than the 0.5 s of processor time a file may use (the budget)",
    ),
    (
        "{{ ('x'*300000000) ~ ('y'*300000000) ~ ('z'*300000000) }}",
        MEMORY + " (the budget)",
    ),
]
CPU_SECONDS = {SCRIPTS[0][0]: 0.5, SCRIPTS[1][0]: 30.0}
"""The processor budget each script runs under: the memory case's is far above what
it can use, so under a loaded machine's page faults it still meets the memory limit
first (at 0.5 s it sometimes ran out of time first)."""


@pytest.mark.parametrize(("template", "said"), SCRIPTS)
def test_an_agent_script_renders_under_the_budget(
    template: str, said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bounds, "BUDGET_CPU_SECONDS", CPU_SECONDS[template])
    script = Script.model_validate({"steps": [{"reasoning": template}]})
    with pytest.raises(ScriptError) as info:
        render(script, {})
    assert str(info.value) == f"the agent's script {said}"
    # the worker that was stopped is replaced: the next script renders
    fine = Script.model_validate({"steps": [{"reasoning": "{{ inputs.a }}!"}]})
    assert render(fine, {"a": 'é"\\'}).steps[0].reasoning == 'é"\\!'


INLINE_SEED = """\
tests:
  - name: slow script
    steps:
      - execute: {{agent: a, as: e}}
      - advance: 1m
      - expect: {{execution: e, status: failed}}
seed:
  organizations:
    - name: o
      apiKeys: [{{name: admin, key: k-admin-0123456789, role: admin}}]
      agents:
        - name: a
          script:
            steps:
              - reasoning: "{template}"
"""


@pytest.mark.slow
def test_a_test_files_inline_seed_runs_under_the_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bounds, "BUDGET_CPU_SECONDS", 0.5)
    (tmp_path / "agentform.yaml").write_text("workspace: w\nendpoint: local\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "slow.yaml").write_text(INLINE_SEED.format(template=SCRIPTS[0][0]))
    result = CliRunner().invoke(cli, ["-C", str(tmp_path), "test"], catch_exceptions=False)
    assert result.output.endswith("1 passed, 0 failed\n"), result.output


def test_a_test_file_linked_from_outside_the_workspace_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "test.yaml").write_text("tests: [{name: t, steps: [{advance: 1s}]}]\n")
    root = tmp_path / "ws"
    (root / "tests").mkdir(parents=True)
    (root / "agentform.yaml").write_text("workspace: w\nendpoint: local\n")
    os.symlink(outside / "test.yaml", root / "tests" / "q.yaml")
    result = CliRunner().invoke(cli, ["-C", str(root), "test"], catch_exceptions=False)
    assert result.exit_code == 1
    assert "tests/q.yaml: error: 'tests/q.yaml' leads outside the workspace" in result.output


BATCH = (
    "batches:\n  - name: b\n    agent: support-agent\n    startAt: 2030-01-01T00:00:00Z\n"
    "    config: {type: timeBatching, batchSize: 1, batchInterval: 60}\n"
    "    itemsFile: ITEMS\n"
)


def items_problems(ws: Path, name: str, content: str) -> list[str]:
    write_workspace(
        ws, {"agentform.yaml": "workspace: w\n", "b.yaml": BATCH.replace("ITEMS", name)}
    )
    (ws / name).write_text(content)
    with pytest.raises(DiagnosticsError) as info:
        load_workspace(ws, environ={})
    return [d.render() for d in info.value.diagnostics]


def test_a_json_item_nested_too_deep_is_a_diagnostic_at_the_item(ws: Path) -> None:
    deep = '{"inputs": {"a": ' + "[" * 20_000 + "]" * 20_000 + "}}"
    content = '[\n  {"inputs": {"a": 1}},\n  ' + deep + "\n]\n"
    assert items_problems(ws, "items.json", content) == [
        "items.json:3:82: error: itemsFile items.json: item 2 is nested deeper than 64 levels"
    ]


def test_a_csv_cell_longer_than_a_cell_holds_is_a_diagnostic_at_its_row_and_column(
    ws: Path,
) -> None:
    content = "inputs.a,inputs.b\nx,y\nz," + "w" * 200_000 + "\n"
    assert items_problems(ws, "items.csv", content) == [
        "items.csv:3:3: error: itemsFile items.csv: row 2, cell 2 (inputs.b): longer than "
        "131,072 characters, the most a cell holds"
    ]


def test_inside_a_repository_a_test_file_may_link_to_its_files_and_no_further(
    tmp_path: Path,
) -> None:
    from agentform.testing.files import load_tests

    repo = tmp_path / "repo"
    (repo / "ws" / "tests").mkdir(parents=True)
    (repo / "shared").mkdir()
    (repo / "agentform-repository.yaml").write_text("workspaces: [ws]\n")
    (repo / "ws" / "agentform.yaml").write_text("workspace: w\nendpoint: local\n")
    test = "tests: [{name: t, steps: [{advance: 1s}]}]\n"
    (repo / "shared" / "t.yaml").write_text(test)
    (tmp_path / "outside.yaml").write_text(test)
    os.symlink(repo / "shared" / "t.yaml", repo / "ws" / "tests" / "shared.yaml")
    os.symlink(tmp_path / "outside.yaml", repo / "ws" / "tests" / "q.yaml")
    workspace = load_workspace(repo / "ws", environ={})
    tests = repo / "ws" / "tests"
    assert len(load_tests(workspace, [tests / "shared.yaml"])) == 1
    with pytest.raises(DiagnosticsError) as info:
        load_tests(workspace, [tests / "q.yaml"])
    assert [d.render() for d in info.value.diagnostics] == [
        "tests/q.yaml: error: 'tests/q.yaml' leads outside the repository: "
        "not allowed in workspace files"
    ]


def test_a_script_renders_in_a_process_holding_more_than_1024_files() -> None:
    """A service holds a descriptor per connection: past 1,024 the worker's answer
    came through select(), which cannot wait on such a descriptor (ValueError)."""
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        from agentform.service.executions import script as scripts

        scripts._WORKER.stop()  # its pipes are opened now, past the 1,024th descriptor
        fine = Script.model_validate({"steps": [{"reasoning": "{{ inputs.a }}!"}]})
        assert render(fine, {"a": "é"}).steps[0].reasoning == "é!"
    finally:
        for fd in held:
            os.close(fd)
