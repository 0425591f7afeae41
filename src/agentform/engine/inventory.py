"""What a workspace manages (`agentform list`): each object the files declare
present, with its live id when it exists. There is no state file: the list is
worked out from the files and one read of the service, as a plan reads it, so
an object a `moved` entry will rename is listed under its new address with the
id it keeps.
"""

from __future__ import annotations

from typing import Any

from agentform.config.loader import Workspace
from agentform.engine.live import read_live
from agentform.engine.moves import resolve_moves
from agentform.kinds import kinds_in_order
from agentform.kinds.keys import address
from agentform.kinds.model import Frozen

FORMAT_VERSION = 1


class Listed(Frozen):
    address: str
    kind: str
    key: str
    liveId: str | None = None
    live: bool = False
    note: str = ""  # "renamed from ... at the next apply"


class Inventory(Frozen):
    formatVersion: int = FORMAT_VERSION
    workspace: str
    organizationId: str
    objects: tuple[Listed, ...]


async def inventory(workspace: Workspace, api: Any) -> Inventory:
    """The objects the files declare present, in plan order, with their live ids."""
    live = await read_live(workspace, api)
    moves = resolve_moves(workspace.settings.moves, live)
    listed = []
    for kind in kinds_in_order():
        objects = moves.objects.get(kind.name, {})
        for item in workspace.declared[kind.name]:
            if not item.present:
                continue
            key = kind.key_of(item, live.references)
            obj = objects.get(key)
            where = address(kind.name, key)
            old = moves.renamed.get(where)
            note = f"renamed from {address(kind.name, old)} at the next apply" if old else ""
            listed.append(
                Listed(
                    address=where,
                    kind=kind.name,
                    key=str(key),
                    liveId=obj.id if obj else None,
                    live=obj is not None,
                    note=note,
                )
            )
    return Inventory(
        workspace=workspace.settings.workspace,
        organizationId=live.organization_id,
        objects=tuple(listed),
    )
