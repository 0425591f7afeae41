"""A rendered script compiled into a program: the timed operations an execution performs.

An operation is a JSON object `{after, op, ...}`: wait `after` seconds (on the
service's clock), then do it. The runner performs an operation and every
following one whose `after` is 0 at the same moment, then sleeps until the
next. The program is computed once, when the execution is created, and stored
with it, so a restarted service continues exactly where it stopped, and ids in
the events (actions, nodes, files) are the same however often it is read.

Operations:
- `start`: starting -> running, EXECUTION_STARTED
- `event`: emit `event` with `payload` (`stamp` names a payload field that
  gets the time of emission)
- `file`: store the produced file, then EXECUTION_FILE_ADDED
- `confirm`: running -> awaiting_confirmation, EXECUTION_AWAITING_CONFIRMATION
- `complete` / `fail`: the end, EXECUTION_COMPLETED / EXECUTION_FAILED
"""

from __future__ import annotations

import uuid
from typing import Any

from agentform.service.executions.script import RenderedScript, ScriptAction, ScriptStep

Op = dict[str, Any]
_NODES = uuid.UUID("5c1e4d6a-8f0b-4a57-9a3e-6d1f0c2b7a10")


def node_id(name: str) -> str:
    """A node's id: stable for its name, so every execution names a node alike."""
    return str(uuid.uuid5(_NODES, name))


def failed_program(reason: str) -> list[Op]:
    """An execution that cannot run its script: it starts, then fails saying why."""
    return [{"after": 0, "op": "start"}, {"after": 0, "op": "fail", "reason": reason}]


def compile_program(script: RenderedScript) -> list[Op]:
    builder = _Builder()
    builder.add("start")
    for number, step in enumerate(script.steps, start=1):
        builder.step(number, step)
    end = script.end
    if end.failure is not None:
        builder.add("fail", reason=end.failure)
    else:
        builder.add(
            "complete", result=end.result or {}, reasoning=end.reasoning, outcome=end.outcome
        )
    return builder.ops


class _Builder:
    def __init__(self) -> None:
        self.ops: list[Op] = []
        self.wait = 0.0  # seconds before the next operation
        self.elapsed = 0.0  # simulated seconds since the start
        self.node_entered_at: float | None = None

    def add(self, op: str, **fields: Any) -> None:
        self.ops.append({"after": round(self.wait, 6), "op": op, **fields})
        self.elapsed += self.wait
        self.wait = 0.0

    def event(self, event: str, payload: dict[str, Any], stamp: str | None = None) -> None:
        fields: dict[str, Any] = {"event": event, "payload": payload}
        if stamp:
            fields["stamp"] = stamp
        self.add("event", **fields)

    def step(self, number: int, step: ScriptStep) -> None:
        self.event("EXECUTION_STEP_STARTED", {"step": number})
        if step.transition is not None:
            payload: dict[str, Any] = {"to_node": step.transition.toNode}
            if self.node_entered_at is not None:
                payload["from_node_duration"] = round(self.elapsed - self.node_entered_at, 6)
            if step.transition.transitionType is not None:
                payload["transition_type"] = step.transition.transitionType
            self.event("EXECUTION_TRANSITIONED", payload)
            self.node_entered_at = self.elapsed
        if step.reasoning is not None:
            self.event("EXECUTION_REASONING_ADDED", {"reasoning": step.reasoning})
        if step.message is not None:
            self.event("EXECUTION_MESSAGE_ADDED", {"message": step.message})
        for action in step.actions:
            self.action(number, action)
        if step.playwright is not None:
            self.event(
                "EXECUTION_PLAYWRIGHT_SCRIPT_GENERATED",
                {
                    "node_id": node_id(step.playwright.nodeName),
                    "node_name": step.playwright.nodeName,
                    "script": step.playwright.script,
                    "context": step.playwright.context,
                    "generated_at": None,
                },
                stamp="generated_at",
            )
        if step.file is not None:
            self.add("file", file_id=str(uuid.uuid4()), file=step.file.model_dump())
        if step.workflowUpdate is not None:
            self.event("EXECUTION_WORKFLOW_UPDATED", {"workflow_update": step.workflowUpdate})
        self.wait += step.duration
        self.event("EXECUTION_STEP_PROCESSED", {"step": number})
        if step.confirm is not None:
            self.add("confirm", reason=step.confirm)

    def action(self, number: int, action: ScriptAction) -> None:
        action_id = str(uuid.uuid4())
        self.event(
            "EXECUTION_ACTION_STARTED",
            {
                "action_id": action_id,
                "action_name": action.name,
                "arguments": action.arguments,
                "step_number": number,
            },
        )
        self.wait += action.duration
        done: dict[str, Any] = {"action_id": action_id, "action_name": action.name}
        if action.failure is None:
            done.update(output=action.output, step_number=number, duration=action.duration)
            self.event("EXECUTION_ACTION_COMPLETED", done)
            return
        done.update(failure=action.failure, step_number=number, duration=action.duration)
        if action.osError is not None:
            done["os_error"] = {"message": action.osError.message}
        self.event("EXECUTION_ACTION_FAILED", done)
