"""The times the service writes (`store.database.iso`): one text per instant, formatted
once per instant (cached by it), so a manual clock that moves by a microsecond is a
new text at once and equal instants in any zone are one text."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from agentform.service.runtime import ManualClock
from agentform.service.store.database import Database, iso


def test_a_moved_manual_clock_is_a_new_time_at_once(tmp_path: Path) -> None:
    clock = ManualClock()
    db = Database(tmp_path / "service.db", now=clock.now)
    try:
        with db.write() as conn:
            first, again = conn.now_iso(), conn.now_iso()
            asyncio.run(clock.advance(1e-6))
            moved = conn.now_iso()
    finally:
        db.close()
    assert first == again == "2025-01-01T00:00:00.000000Z"
    assert moved == "2025-01-01T00:00:00.000001Z"


def test_equal_instants_in_any_zone_are_one_text() -> None:
    utc = datetime(2025, 1, 1, 0, 0, tzinfo=UTC)
    paris = datetime(2025, 1, 1, 1, 0, tzinfo=timezone(timedelta(hours=1)))
    assert iso(paris) == iso(utc) == "2025-01-01T00:00:00.000000Z"
    assert iso(utc + timedelta(microseconds=1)) == "2025-01-01T00:00:00.000001Z"


def test_a_naive_time_is_refused_even_when_its_wall_time_was_formatted() -> None:
    iso(datetime(2025, 2, 2, 12, 0, tzinfo=UTC))
    with pytest.raises(ValueError, match="naive"):
        iso(datetime(2025, 2, 2, 12, 0))
