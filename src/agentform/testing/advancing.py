"""`advance: 2m` and `advance: until batches/AGENT/NAME is completed`: the test's
manual clock moves on, and the work that falls due on the way runs in due order.

The words are the clock's own (`rules.clock`: one duration and one condition
grammar for `agentform test` and `service advance`), and so is the moving: the
service's own `POST /agentform/v1/clock/advance`, which `service advance` calls.
A test names its executions by their `as:` names: `until executions/big is
failed`. An `until` that has not come true within a day of the test's clock fails
the step, saying the subject's status.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from agentform.core.errors import ApiError
from agentform.core.problems import did_you_mean
from agentform.rules.clock import (
    DEFAULT_WITHIN,
    ClockWordsError,
    Condition,
    parse_condition,
    parse_duration,
)
from agentform.testing.results import StepFailed

if TYPE_CHECKING:  # checking a test's words (validate) needs no service to run them on
    from agentform.testing.session import TestService

UNTIL = "until "


def advance_problem(
    text: str,
    bound: Sequence[str],
    agents: frozenset[str] | None,
    batches: frozenset[str] | None = frozenset(),
) -> str | None:
    """What is wrong with an `advance:` value (checked before anything runs), or None."""
    written = text.strip()
    try:
        if not written.startswith(UNTIL):
            parse_duration(written)
            return None
        condition = parse_condition(written.removeprefix(UNTIL))
    except ClockWordsError as exc:
        return str(exc)
    subject = condition.key[0]
    if condition.kind == "executions" and subject not in bound:
        hint = did_you_mean(subject, bound) or " (name it with as: in an earlier execute)"
        return f"execution '{subject}' is not known{hint}"
    if condition.kind == "batches" and agents is not None and subject not in agents:
        return f"agent '{subject}' is not known{did_you_mean(subject, agents)}"
    batch = "/".join(condition.key)
    if condition.kind == "batches" and batches is not None and batch not in batches:
        # else a day of waiting for nothing
        hint = did_you_mean(batch, batches) or " (the workspace declares no such batch)"
        return f"batch '{batch}' is not known{hint}"
    return None


async def advance_clock(service: TestService, text: str, executions: Mapping[str, str]) -> None:
    """Moves the test's clock as `agentform service advance` moves a service's: by
    its `POST /clock/advance`, which runs the work that falls due on the way."""
    written = text.strip()
    body = {"duration": written}
    if written.startswith(UNTIL):
        condition = parse_condition(written.removeprefix(UNTIL))
        if condition.kind == "executions":  # the test's name for it, to the service's id
            condition = Condition(condition.kind, (executions[condition.key[0]],), condition.status)
        body = {"until": str(condition)}
    try:
        result = await service.own.request("POST", "/clock/advance", json=body, idempotent=False)
    except ApiError as exc:
        if exc.status == 404:  # nothing to wait for: no such batch or execution
            raise StepFailed(exc.message) from exc  # the answer, for `Context.said`
        raise
    if result.get("met") is False:
        now = result.get("status") or "not there"
        shown = written.removeprefix(UNTIL)
        raise StepFailed(
            f"{shown}: not within {DEFAULT_WITHIN / 3600:g} h of the clock (it is {now})"
        )
