"""`agentform service advance DURATION | until CONDITION`: moving the clock of a
running service started with `agentform service run --clock manual`.

The words are read here first (rules/clock.py), so a typo is reported before any
call; then `GET /agentform/v1/clock` tells a manual clock from the wall clock (and
a service without agentform's operations from both), and `POST
/agentform/v1/clock/advance` moves it. The service runs what falls due on the way
and answers once it has: the command waits as long as that work takes.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agentform.api.connect import Endpoint
from agentform.cli.agentform_ops import own_client, read_clock
from agentform.cli.common import Options, endpoint_of, load
from agentform.cli.endpoint import LOCAL, api_key_for
from agentform.cli.safety import run_secrets
from agentform.core.errors import AgentformError
from agentform.rules.clock import CONDITION_FORMS, parse_condition, parse_duration

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
    if len(words) > 1:
        raise AgentformError(
            f"give one duration (90s, 2m, 1h30m, 1d), or until CONDITION; not {' '.join(words)!r}"
        )
    parse_duration(words[0])
    return {"duration": words[0]}


def _endpoint(opts: Options) -> Endpoint:
    """--endpoint (or AGENTFORM_ENDPOINT), else the endpoint of the workspace it runs in."""
    if not opts.endpoint and (opts.workspace_dir / "agentform.yaml").is_file():
        workspace = load(opts, unset_secrets_allowed=True)  # no secret's value is needed
        return _running_service(endpoint_of(opts, workspace))
    if not opts.endpoint:
        raise AgentformError(f"which service? {NEEDS_URL}")
    key = api_key_for(opts.endpoint, opts.api_key_file)
    return _running_service(Endpoint(opts.endpoint, key).register(run_secrets()))


def _running_service(endpoint: Endpoint) -> Endpoint:
    if endpoint.url == LOCAL:
        raise AgentformError(
            "the local endpoint runs only while a command does, so its clock has nothing "
            f"to move; {NEEDS_URL}"
        )
    return endpoint


def advance_clock(opts: Options, words: tuple[str, ...], within: str) -> dict[str, Any]:
    """Moves the service's manual clock as the words say; its answer (an AdvanceResult)."""
    body = request_body(words, within)
    endpoint = _endpoint(opts)

    async def go() -> dict[str, Any]:
        async with own_client(endpoint, opts.workspace_dir, **opts.client_settings()) as api:
            clock = await read_clock(api, endpoint.shown, "have a clock agentform can move")
            if clock.get("kind") != "manual":
                raise AgentformError(
                    f"the service at {endpoint.shown} is not on a manual clock (it runs on "
                    "the wall clock); start it with `agentform service run --clock manual`"
                )
            answer: dict[str, Any] = await api.request(
                "POST", "/clock/advance", json=body, idempotent=False
            )
            return answer

    return asyncio.run(go())
