"""Agent scripts as units: rendering with inputs, compiling to a timed program, the status table."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentform.service.executions.program import compile_program, node_id
from agentform.service.executions.script import Script, ScriptError, render
from agentform.service.models import execution_status as status
from agentform.service.startup.seed_file import DEMO_SEED, SeedError, read_seed

SCRIPT = Script.model_validate(
    {
        "inputs": {"order": "A-1", "count": 2},
        "steps": [
            {
                "transition": {"toNode": "Open"},
                "reasoning": "open {{ inputs.order }}",
                "actions": [
                    {
                        "name": "navigate",
                        "arguments": {"n": "{{ inputs.count }}", "text": "{{inputs.count}} items"},
                        "output": "ok",
                        "duration": 0.25,
                    }
                ],
                "duration": 0.5,
            },
            {"when": "inputs.count > 5", "message": "many"},
            {
                "transition": {"toNode": "Pay", "transitionType": "next"},
                "actions": [
                    {
                        "name": "save",
                        "failure": "cannot write",
                        "osError": {"message": "ENOSPC"},
                        "duration": 0.1,
                    }
                ],
                "confirm": "sure about {{ inputs.order }}?",
            },
        ],
        "end": [
            {"when": "inputs.order == 'bad'", "failure": "order {{ inputs.order }} is bad"},
            {"result": {"order": "{{ inputs.order }}"}, "reasoning": "done", "outcome": "success"},
        ],
    }
)


def test_inputs_are_substituted_over_the_scripts_defaults() -> None:
    rendered = render(SCRIPT, {"order": "B-2"})
    assert rendered.steps[0].reasoning == "open B-2"
    # a string that is one expression keeps the input's type; text around it makes text
    assert rendered.steps[0].actions[0].arguments == {"n": 2, "text": "2 items"}
    assert rendered.steps[1].confirm == "sure about B-2?"
    assert rendered.end.result == {"order": "B-2"}


def test_when_keeps_steps_and_picks_the_end_by_input() -> None:
    assert len(render(SCRIPT, {}).steps) == 2
    assert [s.message for s in render(SCRIPT, {"count": 9}).steps] == [None, "many", None]
    bad = render(SCRIPT, {"order": "bad"})
    assert bad.end.failure == "order bad is bad" and bad.end.result is None


@pytest.mark.parametrize(
    "step",
    [{"message": "{{ inputs.missing }}"}, {"message": "x {{ inputs.missing }} y"}],
)
def test_a_missing_input_is_a_clear_script_error(step: dict[str, str]) -> None:
    with pytest.raises(ScriptError, match="input 'missing', which was not given"):
        render(Script.model_validate({"steps": [step]}), {})


def test_a_missing_input_in_when_is_a_script_error() -> None:
    with pytest.raises(ScriptError, match="missing"):
        render(Script.model_validate({"steps": [{"when": "inputs.missing"}]}), {})


def test_a_type_clash_in_an_expression_is_a_script_error() -> None:
    script = Script.model_validate({"end": [{"when": "inputs.n > 1", "failure": "x"}]})
    with pytest.raises(ScriptError):
        render(script, {"n": "text"})


def test_program_times_every_event_and_ids_are_stable() -> None:
    program = compile_program(render(SCRIPT, {}))
    names = [op.get("event", op["op"]) for op in program]
    assert names == [
        "start",
        "EXECUTION_STEP_STARTED",
        "EXECUTION_TRANSITIONED",
        "EXECUTION_REASONING_ADDED",
        "EXECUTION_ACTION_STARTED",
        "EXECUTION_ACTION_COMPLETED",
        "EXECUTION_STEP_PROCESSED",
        "EXECUTION_STEP_STARTED",
        "EXECUTION_TRANSITIONED",
        "EXECUTION_ACTION_STARTED",
        "EXECUTION_ACTION_FAILED",
        "EXECUTION_STEP_PROCESSED",
        "confirm",
        "complete",
    ]
    waits = [op["after"] for op in program]
    assert waits[5] == 0.25 and waits[6] == 0.5 and waits[10] == 0.1 and waits[11] == 1.0
    started, done = program[4]["payload"], program[5]["payload"]
    assert started["action_id"] == done["action_id"] and started["step_number"] == 1
    assert done == {**done, "output": "ok", "duration": 0.25}
    failed = program[10]["payload"]
    assert failed["failure"] == "cannot write" and failed["os_error"] == {"message": "ENOSPC"}
    second = program[8]["payload"]
    assert second == {"to_node": "Pay", "from_node_duration": 0.75, "transition_type": "next"}
    assert "from_node_duration" not in program[2]["payload"]
    assert node_id("Pay") == node_id("Pay") != node_id("Open")
    assert program[-1] == {
        "after": 0,
        "op": "complete",
        "result": {"order": "A-1"},
        "reasoning": "done",
        "outcome": "success",
    }


def test_an_agent_without_a_script_completes_after_one_step_with_an_empty_result() -> None:
    program = compile_program(render(None, {}))
    assert [op.get("event", op["op"]) for op in program] == [
        "start",
        "EXECUTION_STEP_STARTED",
        "EXECUTION_STEP_PROCESSED",
        "complete",
    ]
    assert program[-1]["result"] == {} and program[-1]["outcome"] == "success"


def test_demo_scripts_together_cover_every_execution_event_and_run_one_to_ten_seconds() -> None:
    emitted = set()
    for agent in DEMO_SEED.organizations[0].agents:
        program = compile_program(render(agent.script, {}))
        running = sum(op["after"] for op in program)
        assert 1.0 <= running <= 10.0, (agent.name, running)
        emitted |= {op["event"] for op in program if op["op"] == "event"}
        emitted |= {op["op"] for op in program}
    # the rest come from API calls: pause, resume, cancel and user messages
    by_ops = {"start", "file", "confirm", "complete", "fail"}
    assert by_ops <= emitted
    assert {
        "EXECUTION_STEP_STARTED",
        "EXECUTION_STEP_PROCESSED",
        "EXECUTION_ACTION_STARTED",
        "EXECUTION_ACTION_COMPLETED",
        "EXECUTION_ACTION_FAILED",
        "EXECUTION_MESSAGE_ADDED",
        "EXECUTION_REASONING_ADDED",
        "EXECUTION_PLAYWRIGHT_SCRIPT_GENERATED",
        "EXECUTION_TRANSITIONED",
        "EXECUTION_WORKFLOW_UPDATED",
    } <= emitted


def test_a_template_typo_in_a_seed_is_a_seed_error(tmp_path: Path) -> None:
    seed = tmp_path / "seed.yaml"
    seed.write_text(
        "organizations:\n"
        "  - name: o\n"
        "    agents:\n"
        "      - name: a\n"
        "        script:\n"
        "          steps:\n"
        "            - message: 'hello {{ inputs.name '\n"
    )
    with pytest.raises(SeedError, match="template"):
        read_seed(seed)


def test_an_action_with_output_and_failure_is_a_seed_error(tmp_path: Path) -> None:
    seed = tmp_path / "seed.yaml"
    seed.write_text(
        "organizations:\n  - name: o\n    agents:\n      - name: a\n        script:\n"
        "          steps: [{actions: [{name: x, output: 1, failure: y}]}]\n"
    )
    with pytest.raises(SeedError, match="not both"):
        read_seed(seed)


def test_seed_problems_are_placed_at_their_lines(tmp_path: Path) -> None:
    """Each problem of a seed file is one line at its file:line:col, as the
    workspace's diagnostics are (they named the path in the document only)."""
    seed = tmp_path / "seed.yaml"
    seed.write_text("organizations:\n  - name: o\n    agents:\n      - {nam: a}\n")
    with pytest.raises(SeedError) as info:
        read_seed(seed)
    assert str(info.value).splitlines() == [
        f"{seed}:4:9: error: organizations.0.agents.0.name: Field required",
        f"{seed}:4:10: error: organizations.0.agents.0.nam: unknown field (did you mean 'name'?)",
    ]
    seed.write_text("organizations:\n  - name: [o\n")
    with pytest.raises(SeedError) as info:
        read_seed(seed)
    [line] = str(info.value).splitlines()
    assert line.startswith(f"{seed}:3:1: error: not valid YAML: "), line


def test_status_table_terminal_is_final_and_every_status_is_known() -> None:
    assert set(status.MOVES) == set(status.STATUSES)
    for final in status.TERMINAL:
        assert status.MOVES[final] == frozenset()
        for other in status.STATUSES:
            assert not status.allowed(final, other)
    assert status.allowed("queued", "starting")
    assert not status.allowed("queued", "running")
    with pytest.raises(status.StatusMoveError, match="completed cannot become running"):
        status.check_move("completed", "running")
