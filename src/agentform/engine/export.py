"""Export: the live workspace as YAML documents that plan to no changes."""

from __future__ import annotations

from typing import Any

from ..config.loader import Workspace
from ..kinds import kinds_in_order
from ..kinds.base import PlanContext
from .planner import Everything, read_live


async def export_live(
    workspace: Workspace, api: Any, kinds: list[str] | None = None
) -> dict[str, list[dict[str, Any]]]:
    """kind -> the YAML of each live object of it (presets left out), sorted by name."""
    chosen = [k for k in kinds_in_order() if kinds is None or k.name in kinds]
    live = await read_live(
        workspace,
        api,
        depth={k.name: Everything() for k in chosen},
        references={r for k in chosen for r in k.references},
    )
    ctx = PlanContext(live.references)
    return {
        k.name: [k.export(obj, ctx) for _, obj in sorted(live.objects[k.name].items())]
        for k in chosen
    }
