"""Declarations across a workspace's files: the children a parent declares (the
attachments of a webhook) and the rule that each key is declared once."""

from __future__ import annotations

from typing import Any

from agentform.config.file_parse import Where
from agentform.core.diagnostics import Diagnostics
from agentform.kinds import Kind
from agentform.kinds.model import Declared


def declare_children(
    kind: Kind,
    parent: Declared,
    path: tuple[str | int, ...],
    where: Where,
    declared: dict[str, list[Declared]],
    diags: Diagnostics,
) -> None:
    """A parent's children (attachments of a webhook) become declarations of their kind."""
    for field_name, child_kind in kind.children.items():
        items = getattr(parent.model, field_name, None) or []
        if items and not parent.present:
            diags.error(
                f"{kind.label} {getattr(parent.model, 'name', '')} is declared absent: "
                f"its {field_name} cannot be declared",
                where((*path, field_name)),
            )
            continue
        for j, child in enumerate(items):
            at = (*path, field_name, j)
            child_declared = Declared(child, where(at), parent, locate=where.inside(*at))
            declared[child_kind].append(child_declared)


def check_unique(declared: dict[str, list[Declared]], diags: Diagnostics) -> None:
    for kind, items in declared.items():
        first: dict[Any, Declared] = {}
        for item in items:
            key = Kind.registry[kind].key_of(item)
            if key in first:
                diags.error(
                    f"{kind}: '{key}' is declared twice (first at {first[key].position})",
                    item.position,
                )
            else:
                first[key] = item
