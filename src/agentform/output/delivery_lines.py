"""The lines of `agentform webhook deliveries|resend`, and the failing notice of
`webhook test`.

A delivery is one line (when, status, event, its execution or batch, its id),
then one indented line per attempt (when, the answer's status or what went
wrong, how long it took, the answer's first bytes, quoted, control characters
shown escaped so a receiver's answer cannot move the terminal's cursor).
"""

from __future__ import annotations

import json
from typing import Any

from agentform.core.words import counted

HEAD_SHOWN = 60


def deliveries_lines(name: str, deliveries: list[dict[str, Any]]) -> list[str]:
    if not deliveries:
        return [f"no deliveries to {name} match"]
    lines = [
        f"{counted(len(deliveries), 'delivery', plural='deliveries')} to {name}, newest first:"
    ]
    for d in deliveries:
        subject = d.get("executionId") or d.get("batchId") or "-"
        lines.append(f"{d['createdAt']}  {d['status']:<9}  {d['event']}  {subject}  {d['id']}")
        lines += [_attempt_line(a) for a in d.get("attempts", [])]
        if d["status"] == "pending" and not d.get("attempts"):
            lines.append("    no attempt yet")
    return lines


def _attempt_line(attempt: dict[str, Any]) -> str:
    status = attempt.get("responseStatus")
    outcome = str(status) if status is not None else (attempt.get("error") or "no answer")
    line = f"    #{attempt['number']}  {attempt['at']}  {outcome}  {attempt['durationMs']} ms"
    head = attempt.get("responseHead") or ""
    if head:
        shown = head[:HEAD_SHOWN] + ("…" if len(head) > HEAD_SHOWN else "")
        line += "  " + _quoted(shown)
    return line


def _quoted(text: str) -> str:
    """JSON-quoted, every control character escaped (C1 and DEL too)."""
    escaped = "".join(ch if ch.isprintable() or ch == " " else f"\\u{ord(ch):04x}" for ch in text)
    return json.dumps(escaped, ensure_ascii=False).replace("\\\\u", "\\u")


def resent_lines(ids: list[str], what: str) -> list[str]:
    if not ids:
        return [f"nothing to resend: {what}"]
    return [
        f"resent {counted(len(ids), 'delivery', plural='deliveries')} ({what}):",
        *(f"  {i}" for i in ids),
    ]


def failing_line(name: str, health: dict[str, Any] | None) -> str | None:
    """A notice when the integration is failing, else None."""
    if not health or health.get("status") != "failing":
        return None
    failures = int(health.get("consecutiveFailures", 0))
    return (
        f"{name} is failing since {health.get('failingSince')} "
        f"({counted(failures, 'failed delivery', plural='failed deliveries')} in a row): "
        "one attempt at a time, 30 s apart, until one succeeds"
    )
