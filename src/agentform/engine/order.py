"""The order of a plan's changes, in stages built from kind levels.

Kinds declare once which kinds they depend on (`Kind.depends_on`, a child's
`parent`); each kind gets a level from that (`kinds.base.kind_levels`), the way
decK orders its entity types. Creates, updates and replaces go forward, level by
level; then cancels and deletes go backward, the highest level first. The
changes of one stage run concurrently; a change's explicit `dependsOn` (an id it
needs, its parent) is waited for on top. Linear in the number of changes.
"""

from __future__ import annotations

from agentform.engine.model import Change
from agentform.kinds.order import kind_levels

BACKWARD = ("cancel", "delete")


def stages(changes: tuple[Change, ...] | list[Change]) -> list[list[Change]]:
    """The changes grouped in the stages apply runs one after another."""
    levels = kind_levels()
    top = max(levels.values(), default=0)
    buckets: list[list[Change]] = [[] for _ in range(2 * (top + 1))]
    stage_of: dict[str, int] = {}
    for change in changes:
        level = levels[change.kind]
        stage = 2 * top + 1 - level if change.action in BACKWARD else level
        buckets[stage].append(change)
        stage_of[change.id] = stage
    for change in changes:
        for dep in change.dependsOn:
            if dep not in stage_of:
                raise ValueError(f"{change.id} depends on {dep}, which is not in the plan")
            if stage_of[dep] > stage_of[change.id]:
                raise ValueError(f"{change.id} depends on {dep}, which comes after it")
    return [bucket for bucket in buckets if bucket]
