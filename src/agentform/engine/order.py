"""Dependency order of a plan's changes.

Creates and updates of a kind wait for the creates and updates of the kinds it
depends on; deletes go the other way: a kind's deletes wait for the deletes of
the kinds that depend on it. Explicit `dependsOn` entries are added on top.
"""

from __future__ import annotations

from ..kinds import Kind
from .model import Change


def dependencies(changes: list[Change]) -> dict[str, set[str]]:
    registry = Kind.registry
    deps: dict[str, set[str]] = {c.id: set(c.dependsOn) for c in changes}
    for change in changes:
        kind = registry[change.kind]
        for other in changes:
            if other is change:
                continue
            if change.action != "delete" and other.action != "delete":
                if other.kind in kind.depends_on:
                    deps[change.id].add(other.id)
            elif (
                change.action == "delete"
                and other.action == "delete"
                and change.kind in registry[other.kind].depends_on
            ):
                deps[change.id].add(other.id)
    return deps
