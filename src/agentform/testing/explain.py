"""Why each event of an execution was, or was not, delivered to a webhook.

For a failing delivery expectation: one line per event of the execution, with the
decision the service's routing made for that webhook's attachment and the rule
that decided (`eventRules`, `metadataFilter.KEY`, `fieldFilters[i]`), and what
became of the delivery. The decisions are the service's own, recorded when it
routed each event, as `agentform webhook explain` reads them (`GET /agentform/v1/
executions/{id}/routing`): never worked out again here.
"""

from __future__ import annotations

from typing import Any

from agentform.output.routing_lines import plain  # payload values, escaped as explain does
from agentform.testing.steps import Context

MAX_LINES = 50


async def why_lines(ctx: Context, execution: str, webhook: str) -> list[str]:
    """Indented lines explaining the routing of `execution`'s events to `webhook`."""
    webhook_id = await ctx.id_of("/webhook-integrations", webhook)
    answer = await ctx.service.own.request("GET", f"/executions/{execution}/routing")
    decisions: list[dict[str, Any]] = [d for e in answer["events"] for d in e["decisions"]]
    mine = [d for d in decisions if d["integrationId"] == webhook_id]
    if not mine:
        return [f"  why: {webhook} is not attached to this execution's agent"]
    # Events its event rules do not list are the many: one line for them all.
    unlisted = [d for d in mine if not d["sent"] and d["rule"] == "eventRules"]
    decided = [d for d in mine if d not in unlisted]
    lines = ["  why:"]
    for d in decided[:MAX_LINES]:
        lines.append(f"    {d['event']}: {d['outcome']} ({plain(d['reason'])})")
    if len(decided) > MAX_LINES:
        lines.append(f"    … {len(decided) - MAX_LINES} more")
    if unlisted:
        events = list(dict.fromkeys(d["event"] for d in unlisted))
        lines.append(f"    not sent, not in its event rules: {', '.join(events)}")
    return lines
