"""`advance: 2m` and `advance: until batches/AGENT/NAME is completed`: the test's
manual clock moves on, and the work that falls due on the way runs in due order.

The words are the clock's own (`rules.clock`: one duration and one condition
grammar for `agentform test` and `service advance`), and so is the moving
(`service.runtime.advancing.advance`). A test names its executions by their
`as:` names: `until executions/big is failed`. An `until` that has not come true
within a day of the test's clock fails the step, saying the subject's status.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agentform.core.problems import did_you_mean
from agentform.rules.clock import ClockWordsError, Condition, parse_condition, parse_duration
from agentform.service.runtime.advancing import DEFAULT_WITHIN, NothingToWaitFor, advance
from agentform.testing.results import StepFailed
from agentform.testing.session import TestService

UNTIL = "until "


def advance_problem(
    text: str,
    bound: Sequence[str],
    agents: frozenset[str] | None,
    batches: frozenset[str] = frozenset(),
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
    if condition.kind == "batches" and batch not in batches:  # else a day of waiting for nothing
        hint = did_you_mean(batch, batches) or " (the workspace declares no such batch)"
        return f"batch '{batch}' is not known{hint}"
    return None


async def advance_clock(
    service: TestService, text: str, executions: Mapping[str, str], organization_id: str
) -> None:
    written = text.strip()
    if not written.startswith(UNTIL):
        await advance(service.app.state, seconds=parse_duration(written))
        return
    condition = parse_condition(written.removeprefix(UNTIL))
    if condition.kind == "executions":  # the test's name for it, to the service's id
        condition = Condition(condition.kind, (executions[condition.key[0]],), condition.status)
    try:
        result = await advance(
            service.app.state,
            until=condition,
            within=DEFAULT_WITHIN,
            organization_id=organization_id,
        )
    except NothingToWaitFor as exc:
        raise StepFailed(str(exc)) from None
    if not result.met:
        now = result.status or "not there"
        shown = text.strip().removeprefix(UNTIL)
        raise StepFailed(
            f"{shown}: not within {DEFAULT_WITHIN / 3600:g} h of the clock (it is {now})"
        )
