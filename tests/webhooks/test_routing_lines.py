"""The words of `webhook explain` and `service advance` (output/routing_lines.py)."""

from __future__ import annotations

from typing import Any

import pytest

from agentform.output.routing_lines import advance_line, plain, routing_lines


def test_text_from_the_service_cannot_drive_the_terminal() -> None:
    assert plain("ops\x1b[2Jalerts\r\n") == "ops\\x1b[2Jalerts\\r\\n"
    assert plain("équipe paiements") == "équipe paiements"  # not ASCII, shown as is


def test_an_event_without_attachments_and_a_truncated_answer_say_so() -> None:
    answer: dict[str, Any] = {
        "executionId": "e-1",
        "status": "running",
        "truncated": True,
        "events": [{"event": "EXECUTION_STARTED", "at": "T0", "decisions": []}],
    }
    assert routing_lines(answer) == [
        "Execution e-1 (running): 1 event",
        "EXECUTION_STARTED at T0",
        "  no webhook integration was attached to the agent",
        "(more decisions than the service shows for one execution: the rest left out)",
    ]


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0, "0s"),
        (0.5, "0.5s"),
        (90, "1m30s"),
        (5400, "1h30m"),
        (86400, "1d"),
        (90061, "1d1h1m1s"),
        (29.78921, "29.789s"),
    ],
)
def test_the_distance_moved_is_written_as_durations_are(seconds: float, shown: str) -> None:
    answer = {"now": "T", "advancedSeconds": seconds, "until": None, "met": None}
    assert advance_line(answer) == f"Clock moved {shown}, now T"
