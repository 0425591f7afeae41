"""The views of `agentform list`: a table for a terminal (as `terraform state list`
with the live id beside each address), and a versioned JSON document for programs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agentform.core.words import counted
from agentform.engine.inventory import Inventory

NOT_LIVE = "(not live: the next apply creates it)"


def inventory_text(inventory: Inventory) -> str:
    """One line an object: address, live id (or why there is none), and a note."""
    if not inventory.objects:
        return f"Workspace {inventory.workspace} declares no object.\n"
    width = max(len(o.address) for o in inventory.objects)
    lines = []
    for obj in inventory.objects:
        line = f"{obj.address:<{width}}  {obj.liveId if obj.live else NOT_LIVE}"
        lines.append(line + (f"  ({obj.note})" if obj.note else ""))
    live = sum(o.live for o in inventory.objects)
    missing = len(inventory.objects) - live
    lines += [
        "",
        f"{counted(len(inventory.objects), 'object')} managed by workspace "
        f"{inventory.workspace}: {live} live, {missing} not live yet.",
    ]
    return "\n".join(lines) + "\n"


def inventory_json(inventory: Inventory) -> str:
    return inventory.model_dump_json(indent=2) + "\n"


@dataclass(frozen=True)
class Inventoried:
    """The inventory as each view of `agentform list` shows it, scrubbed by `scrub`."""

    inventory: Inventory
    scrub: Callable[[str], str]  # the workspace's secrets.scrub_shown

    def text(self, view: object) -> str:
        return self.scrub(inventory_text(self.inventory))

    def json(self, view: object) -> str:
        return self.scrub(inventory_json(self.inventory))
