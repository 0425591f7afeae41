"""Reading the live workspace: one list read per kind, deep reads only of what
the files manage, children after their parents, references only when needed."""

from __future__ import annotations

import asyncio
from collections.abc import Container
from dataclasses import dataclass
from typing import Any

from agentform.api.context import Organization, resolve_organization
from agentform.api.together import all_or_none
from agentform.config.loader import Workspace
from agentform.core.diagnostics import Diagnostics
from agentform.core.errors import ReadError
from agentform.core.gcpause import collector_paused
from agentform.core.sensitive import contains_sensitive
from agentform.kinds import Kind, kinds_in_order
from agentform.kinds.context import Everything, LiveRead, PlanContext
from agentform.kinds.keys import Key
from agentform.kinds.model import LiveObject
from agentform.kinds.references import References

__all__ = ["Everything", "LiveState", "canonical_key", "declares", "managed_keys", "read_live"]


@dataclass
class LiveState:
    organization_id: str
    organization_name: str
    objects: dict[str, dict[Key, LiveObject]]  # kind -> key -> object (presets left out)
    presets: dict[str, set[Key]]  # kind -> the keys of its presets (never managed)
    references: References
    reads: dict[str, set[Key]]  # kind -> keys read in depth (a child: parent keys)


def declares(workspace: Workspace, kind: Kind) -> bool:
    """Whether the files declare objects of `kind` (for a child kind: of its parent,
    which may list children); a kind they do not is read in depth nowhere."""
    return bool(workspace.declared[kind.parent or kind.name])


def managed_keys(workspace: Workspace, kind: Kind, refs: References | None = None) -> set[Key]:
    """Keys read in depth: declared present and needing it (Kind.read_in_depth: pools
    and groups only where `members` is written); for a child kind, the keys of the
    parents that list their children (so the complete set of those is managed). The
    old key of a `moved` object is read as its new one is (it may be renamed)."""
    if kind.parent is None:
        keys = {
            kind.key_of(d, refs)
            for d in workspace.declared[kind.name]
            if d.present and kind.read_in_depth(d)
        }
        return keys | _moved_from(workspace, kind, keys, refs)
    parent = Kind.registry[kind.parent]
    fields = [f for f, child in parent.children.items() if child == kind.name]
    parents = {
        parent.key_of(d, refs)
        for d in workspace.declared[parent.name]
        if d.present and any(getattr(d.model, f, None) is not None for f in fields)
    }
    return parents | _moved_from(workspace, parent, parents, refs)


def _moved_from(
    workspace: Workspace, kind: Kind, keys: set[Key], refs: References | None
) -> set[Key]:
    """The old keys of the `moved` entries of `kind` whose new keys are among `keys`."""
    return {
        canonical_key(kind, m.source, refs)
        for m in workspace.settings.moves
        if m.kind == kind.name and canonical_key(kind, m.target, refs) in keys
    }


def canonical_key(kind: Kind, key: Key, refs: References | None) -> Key:
    """`key` as written, in the form live objects are keyed by (a batch's agent by
    its name) when `refs` are given."""
    if refs is not None and kind.key_references and key:
        return Key(refs[kind.key_references[0]].canonical(key[0]), *key[1:])
    return key


async def read_live(
    workspace: Workspace,
    api: Any,
    depth: dict[str, Container[Key]] | None = None,
    references: set[str] | None = None,
) -> LiveState:
    """Every kind's collection (one list read each) plus deep reads of managed keys,
    with the cyclic collector paused (tens of thousands of answers, no cycles), and
    what was read frozen out of later collections (core/gcpause.py)."""
    with collector_paused(keep=True):
        return await _read_live(workspace, api, depth, references)


async def _read_live(
    workspace: Workspace,
    api: Any,
    depth: dict[str, Container[Key]] | None,
    references: set[str] | None,
) -> LiveState:
    organization = await _resolving_organization(workspace, api)
    kinds = kinds_in_order()
    refs = References(api)
    needed = (
        references
        if references is not None
        else {r for k in kinds for r in k.references_needed(workspace.declared[k.name])}
    )
    reads: dict[str, set[Key]] = {}
    objects: dict[str, dict[Key, LiveObject]] = {}
    presets: dict[str, set[Key]] = {}
    done = {k.name: asyncio.get_running_loop().create_future() for k in kinds}

    async def read(kind: Kind) -> None:
        try:
            managed = await _managed(workspace, kind, depth, refs)
            if isinstance(managed, set | frozenset):
                reads[kind.name] = set(managed)
            parents: dict[Key, LiveObject] = {}
            if kind.parent is not None:
                await done[kind.parent]
                parent_objects = objects[kind.parent]
                parents = {k: o for k, o in parent_objects.items() if k in managed}
            live = await kind.read_live(LiveRead(api, managed, refs, parents))
            objects[kind.name] = _by_key(kind, live, presets)
            done[kind.name].set_result(None)
        except asyncio.CancelledError:
            done[kind.name].cancel()  # stopped with the run: no error of its own
            raise
        except BaseException as exc:
            done[kind.name].set_exception(exc)
            raise

    # the first read that fails stops the others: its error is the run's, unless
    # /context fails (then that one is, see _first)
    reading = asyncio.ensure_future(all_or_none(refs.load(needed), *(read(k) for k in kinds)))
    try:
        org = await _first(organization, reading)
        await reading
    finally:
        for future in done.values():
            if future.done() and not future.cancelled():
                future.exception()  # retrieved: one error is the run's, raised once
    _learn_earlier_values(workspace, objects, refs)
    return LiveState(org.id, org.name, objects, presets, refs, reads)


async def _resolving_organization(workspace: Workspace, api: Any) -> asyncio.Future[Organization]:
    """The organization being resolved from /context, alongside the lists."""
    settings = workspace.settings
    organization = asyncio.ensure_future(
        resolve_organization(api, settings.organization_id, settings.organization_from)
    )
    if settings.organization_id is not None:
        # a key reaching several organizations makes the lists name the one chosen;
        # without a choice it must reach one (or the run stops), so they go at once
        await _first(organization)
    return organization


async def _managed(
    workspace: Workspace,
    kind: Kind,
    depth: dict[str, Container[Key]] | None,
    refs: References,
) -> Container[Key]:
    """The keys of `kind` to read in depth: the ones `depth` gives it, else the ones
    the files manage (none when `depth` is given but leaves the kind out)."""
    if depth is not None and kind.name in depth:
        return depth[kind.name]
    declared = workspace.declared[kind.parent or kind.name]
    if kind.key_references and any(d.present for d in declared):
        await refs.load(kind.key_references)
    return managed_keys(workspace, kind, refs) if depth is None else set()


async def _first(
    organization: asyncio.Future[Organization], *rest: asyncio.Future[Any]
) -> Organization:
    """The organization; when /context fails, its error (not the lists') is the run's,
    and the reads still under way are stopped."""
    try:
        return await organization
    except BaseException:
        for future in rest:
            future.cancel()
        await asyncio.gather(*rest, return_exceptions=True)
        raise


def _learn_earlier_values(
    workspace: Workspace, objects: dict[str, dict[Key, LiveObject]], refs: References
) -> None:
    """The live value of a field the files fill with secret() is an earlier value
    of that secret (after a rotation): learned as soon as it is read, so whatever
    the run shows or records next masks it (plan, apply of a saved plan, export)."""
    if not workspace.secrets.values and not workspace.secrets.unset:
        return  # no secret() in the files
    ctx = PlanContext(refs, Diagnostics(), live=objects)
    for kind in kinds_in_order():
        for item in workspace.declared[kind.name]:
            if not item.present or not contains_sensitive(item.model.model_dump()):
                continue
            obj = objects.get(kind.name, {}).get(kind.key_of(item, refs))
            desired = kind.desired_state(item, ctx, obj) if obj is not None else None
            if obj is not None and desired is not None:
                wanted = kind.show(desired, ctx)
                workspace.secrets.learn(kind.show(obj.state, ctx), wanted, kind.set_fields)


def _by_key(
    kind: Kind, live: list[LiveObject], presets: dict[str, set[Key]]
) -> dict[Key, LiveObject]:
    by_key: dict[Key, LiveObject] = {}
    for obj in live:
        if obj.preset:
            presets.setdefault(kind.name, set()).add(obj.key)
            continue
        if obj.key in by_key:
            raise ReadError(
                f"{kind.name}: two live objects have the key '{obj.key}' "
                f"({by_key[obj.key].id}, {obj.id}); agentform will not guess"
            )
        by_key[obj.key] = obj
    return by_key
