"""The lines `agentform webhook explain` and `agentform service advance` print.

`routing_lines` turns the embedded service's routing explanation of an execution
(`GET /agentform/v1/executions/{id}/routing`) into words: each event, then one
line per webhook attachment of the agent, saying whether it was sent, what became
of it, and the rule that decided. Text the service hands back (integration names,
reasons quoting payload values) is shown with control characters escaped, so an
answer cannot move the cursor or recolour a terminal.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from agentform.core.words import counted


def plain(text: object) -> str:
    """`text` with control characters shown as escapes (`\\x1b`), all else as is."""
    return "".join(
        ch if ch.isprintable() or ch == " " else ch.encode("unicode_escape").decode()
        for ch in str(text)
    )


def decision_line(decision: dict[str, Any]) -> str:
    name = plain(decision.get("integrationName", "?"))
    rule = plain(decision.get("rule", "?"))
    reason = plain(decision.get("reason", ""))
    if decision.get("sent"):
        return f"  {name}: sent, {plain(decision.get('outcome', ''))} ({rule}: {reason})"
    return f"  {name}: not sent ({rule}: {reason})"


def routing_lines(answer: dict[str, Any]) -> list[str]:
    events: list[dict[str, Any]] = answer.get("events", [])
    head = (
        f"Execution {plain(answer.get('executionId', '?'))} "
        f"({plain(answer.get('status', '?'))}): {counted(len(events), 'event')}"
    )
    lines = [head]
    for event in events:
        lines.append(f"{plain(event.get('event', '?'))} at {plain(event.get('at', '?'))}")
        decisions = event.get("decisions") or []
        if not decisions:
            lines.append("  no webhook integration was attached to the agent")
        lines += [decision_line(d) for d in decisions]
    if answer.get("truncated"):
        lines.append("(more decisions than the service shows for one execution: the rest left out)")
    return lines


def advance_line(answer: dict[str, Any]) -> str:
    """`service advance`'s outcome: how far the clock moved, and whether the condition held."""
    moved = f"moved {_duration(float(answer.get('advancedSeconds', 0)))}, now {answer.get('now')}"
    until = answer.get("until")
    if until is None:
        return f"Clock {moved}"
    status = answer.get("status")
    if answer.get("met"):
        return f"Clock {moved}: {plain(until)}"
    seen = "there is none yet" if status is None else f"it is {plain(status)}"
    return f"Clock {moved}: not met within the window: {plain(until)} ({seen})"


def _duration(seconds: float) -> str:
    """`1h30m`, `90s`, `0s`, `0.5s`: the largest units first, as durations are written."""
    whole, rest = divmod(seconds, 1)
    parts, left = [], int(whole)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if left >= size:
            parts.append(f"{left // size}{unit}")
            left %= size
    if left or rest or not parts:
        parts.append(f"{round(left + rest, 3):g}s")
    return "".join(parts)


@dataclass(frozen=True)
class Routing:
    """`webhook explain`'s document: the service's explanation in words, or as it is."""

    answer: dict[str, Any]

    def text(self, view: object) -> str:
        return "".join(line + "\n" for line in routing_lines(self.answer))

    def json(self, view: object) -> str:
        return json.dumps(self.answer, indent=2, ensure_ascii=False) + "\n"
