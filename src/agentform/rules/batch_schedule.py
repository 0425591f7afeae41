"""A batch's schedule arithmetic (docs/service/contract.md#execution-batches),
pure (no clock, no database): which items have fallen due at a time, when the
next slice falls due, and how a pause shifts the schedule."""

from __future__ import annotations

from datetime import datetime, timedelta

from agentform.rules.batches import BatchConfig


def released_count(config: BatchConfig, total: int, origin: datetime, at: datetime) -> int:
    """How many items have fallen due by `at`: indexes `0 .. n-1`.

    `origin` is when the first slice falls due (`startAt`, moved on by pauses:
    see `shift_origin`); then every `batchInterval` seconds `batchSize` more.
    """
    if at < origin:
        return 0
    slices = (at - origin) // timedelta(seconds=config.batchInterval) + 1
    return min(total, slices * config.batchSize)


def due_indexes(config: BatchConfig, total: int, origin: datetime, at: datetime) -> range:
    """The item indexes that have fallen due by `at`."""
    return range(released_count(config, total, origin, at))


def next_release_at(
    config: BatchConfig, total: int, origin: datetime, at: datetime
) -> datetime | None:
    """When the next slice after those due at `at` falls due; None once every item is due."""
    released = released_count(config, total, origin, at)
    if released >= total:
        return None
    return origin + timedelta(seconds=config.batchInterval * (released // config.batchSize))


def shift_origin(origin: datetime, paused_at: datetime, resumed_at: datetime) -> datetime:
    """The schedule's origin after a pause from `paused_at` to `resumed_at`.

    A pause stops the batch's schedule: nothing falls due while it is paused,
    and the slices after it keep their spacing, so a long pause never ends in a
    burst. Time paused before the origin costs nothing (a batch paused before
    `startAt` and resumed after it starts at the resume).
    """
    return origin + max(timedelta(0), resumed_at - max(paused_at, origin))
