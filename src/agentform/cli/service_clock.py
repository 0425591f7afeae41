"""`agentform service advance DURATION | until CONDITION`: moving the clock of a
running service started with `agentform service run --clock manual`.

The words are read here first (rules/clock.py), so a typo is reported before any
call; then `GET /agentform/v1/clock` tells a manual clock from the wall clock (and
a service without agentform's operations from both), and `POST
/agentform/v1/clock/advance` moves it. The service runs what falls due on the way
and answers once it has: the command waits as long as that work takes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentform.cli.agentform_ops import read_clock
from agentform.cli.context import RunContext
from agentform.cli.endpoint import LOCAL
from agentform.core.errors import AgentformError
from agentform.core.problems import did_you_mean
from agentform.rules.clock import CONDITION_FORMS, parse_condition, parse_duration

if TYPE_CHECKING:
    from agentform.api.client import ApiClient

NEEDS_URL = (
    "give the URL of the running service with --endpoint (the one `agentform service run "
    "--clock manual` prints)"
)


def request_body(words: tuple[str, ...], within: str) -> dict[str, str]:
    """The advance request of the command's words, checked (ClockWordsError otherwise)."""
    if words[0] == "until":
        condition = " ".join(words[1:])
        if not condition:
            raise AgentformError(f"until what? write until {CONDITION_FORMS}")
        parse_condition(condition)
        parse_duration(within)
        return {"until": condition, "within": within}
    if hint := did_you_mean(words[0], ["until"]):  # `untill`: a typo, not a duration
        raise AgentformError(f"{words[0]!r} is not a duration or until CONDITION{hint}")
    if len(words) > 1:
        raise AgentformError(
            f"give one duration (90s, 2m, 1h30m, 1d), or until CONDITION; not {' '.join(words)!r}"
        )
    parse_duration(words[0])
    return {"duration": words[0]}


def _running_service(run: RunContext) -> str:
    """--endpoint (or AGENTFORM_ENDPOINT), else the endpoint of the workspace it runs
    in; never `local`. The endpoint as shown."""
    endpoint = run.service(f"which service? {NEEDS_URL}")
    if endpoint.url == LOCAL:
        raise AgentformError(
            "the local endpoint runs only while a command does, so its clock has nothing "
            f"to move; {NEEDS_URL}"
        )
    return endpoint.shown


def advance_clock(run: RunContext, words: tuple[str, ...], within: str) -> dict[str, Any]:
    """Moves the service's manual clock as the words say; its answer (an AdvanceResult)."""
    body = request_body(words, within)
    shown = _running_service(run)

    async def go(own: ApiClient) -> dict[str, Any]:
        clock = await read_clock(own, shown, "have a clock agentform can move")
        if clock.get("kind") != "manual":
            raise AgentformError(
                f"the service at {shown} is not on a manual clock (it runs on "
                "the wall clock); start it with `agentform service run --clock manual`"
            )
        answer: dict[str, Any] = await own.request(
            "POST", "/clock/advance", json=body, idempotent=False
        )
        return answer

    return run.with_own(go)
