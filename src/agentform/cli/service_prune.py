"""`agentform service prune --older-than AGE`: forgetting an organization's finished
history now (`POST /agentform/v1/prune`), what a service's retention (`service run
--retain`) does on its clock. The age is read here first (rules/clock.py), so a typo
is reported before any call. On the `local` endpoint it prunes the workspace's own
state file, in-process."""

from __future__ import annotations

from typing import Any

from agentform.api.client import ApiClient
from agentform.cli.agentform_ops import read_clock
from agentform.cli.context import RunContext
from agentform.rules.clock import parse_duration

WHICH = (
    "which service? give its URL with --endpoint (the one `agentform service run` "
    "prints), or run this in a workspace, whose endpoint it prunes"
)


def prune_history(run: RunContext, older_than: str) -> dict[str, Any]:
    """The service's answer: `{olderThan, before, deleted: {KIND: COUNT}}`."""
    parse_duration(older_than)
    shown = run.service(WHICH).shown

    async def go(own: ApiClient) -> dict[str, Any]:
        await read_clock(own, shown, "forget old history")
        body = {"olderThan": older_than}
        answer: dict[str, Any] = await own.request("POST", "/prune", json=body, idempotent=True)
        return answer

    return run.with_own(go)


_WORDS = {"routingDecisions": "routing decisions"}


def prune_line(answer: dict[str, Any]) -> str:
    deleted = answer["deleted"]
    kinds = ", ".join(f"{count} {_WORDS.get(kind, kind)}" for kind, count in deleted.items())
    return f"forgot what finished before {answer['before']}: {kinds}"
