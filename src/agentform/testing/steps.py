"""The steps that act: execute, advance, receiver, message, pause, resume, cancel.

Each is a call to the test's service through the provisioner's client (or a
move of its manual clock); a refusal by the service is a StepError naming the
step, with the service's own message. Names are resolved against the service
once per test (`Context.ids`), executions by their `as:` names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentform.core.errors import ApiError
from agentform.service.settings import RETAIN
from agentform.testing.advancing import advance_clock
from agentform.testing.model import Control, Execute, Message, Receiver, Step
from agentform.testing.results import StepError
from agentform.testing.session import TestService

PRUNED = "the service forgets finished executions"


@dataclass
class Context:
    """One test's state between steps: the service, names resolved, executions bound."""

    service: TestService
    ids: dict[str, dict[str, str]] = field(default_factory=dict)  # list path -> name -> id
    executions: dict[str, str] = field(default_factory=dict)  # `as:` name -> id

    async def id_of(self, path: str, name: str) -> str:
        """The id of the object called `name` in the list at `path` (`/agents`)."""
        if path not in self.ids:
            items = await self.service.api.list_all(path)
            self.ids[path] = {str(i["name"]): str(i["id"]) for i in items}
        found = self.ids[path].get(name)
        if found is None:
            raise StepError(f"no {path.strip('/')[:-1].replace('-', ' ')} is called '{name}'")
        return found

    def execution(self, name: str) -> str:
        return self.executions[name]  # bound: checked before the run

    def named(self, text: str) -> str:
        """`text` with each id the test knows written as its name (an execution's
        `as:` name, an agent's or a pool's name)."""
        named = [*self.executions.items(), *(i for ids in self.ids.values() for i in ids.items())]
        for name, id_ in named:
            text = text.replace(id_, name)
        return text

    def said(self, exc: Exception, text: str) -> str:
        """`text`, what a failed step says, `named`; when the service answered 404 for
        an execution the test named, it says why: only retention deletes an execution,
        so the test's clock moved past its retention after the execution finished."""
        answer = exc if isinstance(exc, ApiError) else exc.__cause__
        said = self.named(text)
        if not isinstance(answer, ApiError) or answer.status != 404:
            return said
        kept = f"{RETAIN.total_seconds() / 86400:g} days"  # the test service's: the default
        for name, id_ in self.executions.items():
            if id_ in str(answer):
                said += f" (execution {name} was pruned: {PRUNED} after {kept})"
        return said


async def run_action(ctx: Context, step: Step) -> None:
    """Carries out a step that acts (not `expect`)."""
    try:
        if step.execute is not None:
            await _execute(ctx, step.execute)
        elif step.advance is not None:
            await advance_clock(ctx.service, step.advance, ctx.executions)
        elif step.receiver is not None:
            _receiver(ctx, step.receiver)
        elif step.message is not None:
            await _message(ctx, step.message)
        else:
            await _control(ctx, step)
    except ApiError as exc:
        raise StepError(str(exc)) from exc  # the answer, for `Context.said`


async def _execute(ctx: Context, execute: Execute) -> None:
    body: dict[str, Any] = {"inputs": execute.inputs, "metadata": execute.metadata}
    if execute.pool:
        body["agentProfilePoolId"] = await ctx.id_of("/agent-profile-pools", execute.pool)
    if execute.profile:
        body["agentProfileId"] = await ctx.id_of("/profiles", execute.profile)
    if execute.version is not None:
        body["version"] = execute.version
    if execute.queue:
        body["onCapacityLimit"] = "queue"
    agent = await ctx.id_of("/agents", execute.agent)
    answer = await ctx.service.api.request("POST", f"/agents/{agent}/execute", json=body)
    if execute.as_:
        ctx.executions[execute.as_] = str(answer["executionId"])


def _receiver(ctx: Context, receiver: Receiver) -> None:
    ctx.service.receivers.behave(receiver.webhook, receiver.fail, receiver.answer)


async def _message(ctx: Context, message: Message) -> None:
    execution = ctx.execution(message.execution)
    await ctx.service.api.request(
        "POST", f"/executions/{execution}/user-messages", json={"message": message.text}
    )


async def _control(ctx: Context, step: Step) -> None:
    for verb, control in (("pause", step.pause), ("resume", step.resume), ("cancel", step.cancel)):
        if isinstance(control, Control):
            execution = ctx.execution(control.execution)
            await ctx.service.api.request("POST", f"/executions/{execution}/{verb}")
