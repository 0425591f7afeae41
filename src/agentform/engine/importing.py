"""Import: live objects brought under management, as the YAML export writes them.

`agentform import KIND/KEY...` picks objects from the export of their kinds
(engine/export.py: secrets as their secret() calls, a plan of it shows no
change), after checking every address at once: a kind that can be declared,
an object the files do not declare yet and the workspace owns, and one that
exists live (else a did-you-mean over the live names). Every problem is
reported together, and nothing is written when there is one.
"""

from __future__ import annotations

from typing import Any

from agentform.config.loader import Workspace
from agentform.config.owns import is_owned, owns_text
from agentform.core.diagnostics import Diagnostics
from agentform.core.problems import did_you_mean
from agentform.engine.export import export_keyed
from agentform.kinds import Kind
from agentform.kinds.keys import Key, address, parse_address
from agentform.kinds.order import top_level_kinds

MAX_ADDRESSES = 1000


def parse_addresses(texts: list[str], workspace: Workspace) -> list[tuple[Kind, Key]]:
    """The objects named, checked before any call (kinds, declared, owned)."""
    diags = Diagnostics()
    kinds = {k.name: k for k in top_level_kinds()}
    if len(texts) > MAX_ADDRESSES:
        diags.error(f"at most {MAX_ADDRESSES} addresses in one import (got {len(texts)})")
        diags.raise_if_errors()
    declared = {
        name: {kind.key_of(d): d for d in workspace.declared[name]} for name, kind in kinds.items()
    }
    out: list[tuple[Kind, Key]] = []
    for text in dict.fromkeys(texts):
        try:
            kind_name, key = parse_address(text)
        except ValueError:
            diags.error(f"{text!r} is not KIND/NAME (e.g. profilePools/checkout-eu)")
            continue
        kind = kinds.get(kind_name)
        if kind is None:
            child = Kind.registry.get(kind_name)
            hint = (
                f" ({child.label}s come with their {child.parent}: import that)"
                if child is not None and child.parent
                else did_you_mean(kind_name, kinds)
            )
            diags.error(f"{text}: {kind_name!r} is not a kind that can be imported{hint}")
            continue
        if key in declared[kind_name]:
            where = declared[kind_name][key].position
            diags.error(f"{text} is declared in the files already (at {where}): it is managed")
        elif not is_owned(workspace.settings.owns, kind, key):
            diags.error(
                f"{text} is not owned by this workspace "
                f"(owns gives {owns_text(workspace.settings.owns, kind_name)} for {kind_name})"
            )
        else:
            out.append((kind, key))
    diags.raise_if_errors()
    return out


async def import_documents(
    workspace: Workspace, api: Any, wanted: list[tuple[Kind, Key]], warnings: list[str]
) -> dict[str, list[dict[str, Any]]]:
    """kind -> the YAML of each object named, in the order named; a DiagnosticsError
    naming every one that is not live."""
    kinds = sorted({kind.name for kind, _ in wanted})
    _, keyed = await export_keyed(workspace, api, kinds, warnings)
    diags = Diagnostics()
    documents: dict[str, list[dict[str, Any]]] = {}
    for kind, key in wanted:
        live = keyed[kind.name]
        if key not in live:
            names = [str(k) for k in live]
            diags.error(
                f"{address(kind.name, key)}: no live {kind.label} is named so"
                + (did_you_mean(str(key), names) or _or_none(kind, names))
            )
            continue
        documents.setdefault(kind.name, []).append(live[key])
    diags.raise_if_errors()
    return documents


def _or_none(kind: Kind, names: list[str]) -> str:
    return "" if names else f" (this workspace owns no live {kind.label})"
