"""The registered kinds in the order they are planned and applied: a kind after
the kinds it names (`depends_on`) and after its parent; the top-level ones are
those a workspace file writes as lists."""

from __future__ import annotations

from agentform.kinds.base import Kind


def top_level_kinds() -> list[Kind]:
    """The kinds written as top-level lists in the YAML, in dependency order."""
    return [k for k in kinds_in_order() if k.parent is None]


def kind_levels() -> dict[str, int]:
    """Each kind's level: 0 when it names no other kind, else one more than the
    highest level of the kinds it depends on (its parent included)."""
    levels: dict[str, int] = {}

    def level(name: str, seen: tuple[str, ...] = ()) -> int:
        if name in seen:
            raise ValueError(f"kinds depend on each other in a cycle: {' -> '.join(seen)}")
        if name not in levels:
            kind = Kind.registry[name]
            deps = [*kind.depends_on, *([kind.parent] if kind.parent else [])]
            levels[name] = 1 + max((level(d, (*seen, name)) for d in deps), default=-1)
        return levels[name]

    for name in Kind.registry:
        level(name)
    return levels


def kinds_in_order() -> list[Kind]:
    """Every kind, a kind after the kinds it depends on (by level, then name)."""
    levels = kind_levels()
    return sorted(Kind.registry.values(), key=lambda k: (levels[k.name], k.name))
