"""Export: the live workspace as YAML documents that plan to no changes."""

from __future__ import annotations

import re
from typing import Any

from ..config.loader import Workspace
from ..kinds import Kind, kinds_in_order
from ..kinds.base import LiveObject
from ..kinds.context import PlanContext
from ..kinds.keys import Key
from .live import Everything, read_live


async def export_live(
    workspace: Workspace, api: Any, kinds: list[str] | None = None
) -> dict[str, list[dict[str, Any]]]:
    """kind -> the YAML of each live object of it (presets left out, children
    written inside their parents), sorted by key."""
    chosen = [
        k
        for k in kinds_in_order()
        if kinds is None or k.name in kinds or (k.parent is not None and k.parent in kinds)
    ]
    live = await read_live(
        workspace,
        api,
        depth={k.name: Everything() for k in chosen},
        references={r for k in chosen for r in (*k.references, *k.key_references)},
    )
    ctx = PlanContext(live.references, live=live.objects)
    children: dict[tuple[str, Key], dict[str, list[dict[str, Any]]]] = {}
    for kind in chosen:
        if kind.parent is None:
            continue
        for key, obj in sorted(live.objects[kind.name].items()):
            owner = (kind.parent, kind.parent_key(key))
            children.setdefault(owner, {}).setdefault(kind.name, []).append(
                kind.export(obj, ctx, {})
            )

    def written(kind: Kind, key: Key, obj: LiveObject) -> dict[str, Any]:
        return kind.export(obj, ctx, children.get((kind.name, key), {}))

    return {
        k.name: [
            written(k, key, obj)
            for key, obj in sorted(live.objects[k.name].items())
            if k.exports(obj)
        ]
        for k in chosen
        if k.parent is None
    }


_SECRET = re.compile(r"""secret\(["']([^"']+)["']\)""")


def secrets_named(documents: dict[str, list[dict[str, Any]]]) -> list[str]:
    """The secret() names an export writes where a value cannot be read back (header
    values): the variables a plan of the export needs."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, str):
            found.update(_SECRET.findall(value))
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(documents)
    return sorted(found)
