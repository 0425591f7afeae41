"""The words that move a manual clock (rules/clock.py): durations and conditions, and
what a mistake in them says."""

from __future__ import annotations

import pytest

from agentform.rules.clock import (
    MAX_DURATION,
    ClockWordsError,
    Condition,
    parse_condition,
    parse_duration,
)
from agentform.rules.execute import EXECUTION_STATUSES
from agentform.service.models.execution_status import STATUSES


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90),
        ("2m", 120),
        ("1h30m", 5400),
        ("1d", 86400),
        ("1d2h3m4s", 86400 + 7200 + 180 + 4),
        ("0.5s", 0.5),
        ("0", 0),
        (" 2M ", 120),
        ("366d", MAX_DURATION),
    ],
)
def test_a_duration_is_read_in_seconds(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("90", "say the unit: 90s"),
        ("", "is not a duration such as 90s, 2m, 1h30m or 1d"),
        ("2m1h", "is not a duration"),
        ("-5s", "is not a duration"),
        ("5 minutes", "is not a duration"),
        ("367d", "longer than the most allowed, 366d"),
        ("9" * 2000 + "s", "at most 600 characters"),
    ],
)
def test_a_duration_that_cannot_be_read_says_what_is_accepted(text: str, words: str) -> None:
    with pytest.raises(ClockWordsError, match=words.replace("(", r"\(")):
        parse_duration(text)


def test_conditions_name_a_batch_of_an_agent_or_an_execution() -> None:
    assert parse_condition("batches/nightly/sync is completed") == Condition(
        "batches", ("nightly", "sync"), "completed"
    )
    parsed = parse_condition("executions/6d2b  is   failed")
    assert parsed == Condition("executions", ("6d2b",), "failed")
    assert str(parsed) == "executions/6d2b is failed"


def test_finished_is_any_final_status() -> None:
    finished = parse_condition("executions/x is finished")
    assert [s for s in EXECUTION_STATUSES if finished.accepts(s)] == [
        "completed",
        "failed",
        "cancelled",
    ]
    assert not finished.accepts(None)
    batch = parse_condition("batches/a/b is finished")
    assert [
        s for s in ("pending", "running", "paused", "completed", "cancelled") if batch.accepts(s)
    ] == [
        "completed",
        "cancelled",
    ]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            "batch/a/b is completed",
            "'batch' is not a kind a condition names (executions, batches)"
            " (did you mean 'batches'?)",
        ),
        ("batches/a/b is complete", "(did you mean 'completed'?)"),
        (
            "batches/a/b is failed",
            "'failed' is not a status of batches"
            " (pending, running, paused, completed, cancelled, finished)",
        ),
        ("executions/x is done", "not a status of executions (queued, starting"),
        ("batches/a is completed", "'batches/a': write batches/AGENT/NAME"),
        ("executions/a/b is completed", "write executions/ID"),
        ("batches/a/b completed", "is not a condition; write KIND/KEY is STATUS"),
        ("batches/a/ is completed", "write batches/AGENT/NAME"),
    ],
)
def test_a_condition_that_cannot_be_read_says_what_is_accepted(text: str, words: str) -> None:
    with pytest.raises(ClockWordsError) as caught:
        parse_condition(text)
    assert words in str(caught.value)


def test_the_execution_statuses_are_the_services() -> None:
    assert EXECUTION_STATUSES == STATUSES
