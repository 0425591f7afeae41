"""`protect`: name globs per kind that are never deleted, whatever the files say.

The rule is checked offline (`validate`) for objects declared absent, and by the
planner for objects that prune would delete.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from agentform.config.globs import matches
from agentform.core.diagnostics import Diagnostics

if TYPE_CHECKING:
    from agentform.kinds.model import Declared


def is_protected(protect: Mapping[str, Sequence[str]], kind: str, key: str) -> bool:
    return matches(protect, kind, key)


def check_protected(
    protect: Mapping[str, Sequence[str]],
    declared: Mapping[str, Sequence[Declared]],
    diagnostics: Diagnostics,
) -> None:
    """An object declared absent that `protect` matches is an error, live or not."""
    from agentform.kinds import Kind

    for kind, items in declared.items():
        for item in items:
            if item.present or not protect.get(kind):
                continue
            key = str(Kind.registry[kind].key_of(item))
            if is_protected(protect, kind, key):
                diagnostics.error(
                    f"{kind} {key} is declared absent but protected (protect in agentform.yaml)",
                    item.position,
                )
