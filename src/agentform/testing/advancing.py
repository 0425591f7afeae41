"""`advance: 2m` and `advance: until batches/AGENT/NAME is completed`: the test's
manual clock moves on, and the work that falls due on the way runs in due order.

MAX_ADVANCE bounds one step (a test file is hostile input): a duration past it is
refused before anything runs, and an `until` that has not come true within it
fails the step.
"""

from __future__ import annotations

import re

from agentform.testing.results import StepError
from agentform.testing.session import TestService

MAX_ADVANCE = 366 * 24 * 3600.0
_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*")
_SCALE = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def advance_problem(text: str) -> str | None:
    """What is wrong with an `advance:` value, or None."""
    if text.strip().startswith("until "):
        return None
    try:
        seconds = parse_duration(text)
    except ValueError as exc:
        return str(exc)
    if seconds > MAX_ADVANCE:
        return f"'{text}' is longer than the {MAX_ADVANCE / 86400:g} days one step may advance"
    return None


def parse_duration(text: str) -> float:
    match = _DURATION.fullmatch(text)
    if not match:
        raise ValueError(f"'{text}' is not a duration (like 30s, 2m, 1h, 1d) or 'until CONDITION'")
    return float(match.group(1)) * _SCALE[match.group(2) or "s"]


async def advance_clock(service: TestService, text: str) -> None:
    if text.strip().startswith("until "):
        raise StepError("advance until a condition needs the service's condition support")
    await service.clock.advance(parse_duration(text))
