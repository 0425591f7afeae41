"""Why each event of an execution was, or was not, delivered to a webhook.

For a failing delivery expectation: one line per event the webhook was notified
of, with what became of it (delivered, after how many attempts, or failed and
the last error).
"""

from __future__ import annotations

from agentform.testing.steps import Context


async def why_lines(ctx: Context, execution: str, webhook: str) -> list[str]:
    """Indented lines explaining the deliveries of `execution` to `webhook`."""
    webhook_id = await ctx.id_of("/webhook-integrations", webhook)
    rows = await ctx.service.api.list_all(f"/webhook-integrations/{webhook_id}/deliveries")
    mine = [r for r in rows if r.get("executionId") == execution]
    if not mine:
        return [f"  why: {webhook} was notified of no event of this execution"]
    lines = []
    for r in mine:
        lines.append(f"  {r['event']}: {_outcome(r)}")
    return lines


def _outcome(record: dict[str, object]) -> str:
    attempts = record["attempts"]
    if record["status"] == "delivered":
        return f"delivered after {attempts} attempt{'s' if attempts != 1 else ''}"
    if record["status"] == "failed":
        return f"failed after {attempts} attempts (last: {record.get('lastError') or 'no answer'})"
    return f"pending after {attempts} attempt{'s' if attempts != 1 else ''}"
