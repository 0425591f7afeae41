"""Planning: read live state, normalise both sides into one model per kind, diff,
and return a Plan. Deletes only when asked (ensure: absent, prune); protect and
presets are never deleted."""

from __future__ import annotations

import asyncio
import fnmatch
import json
import secrets as pysecrets
from collections.abc import Container
from dataclasses import dataclass, field
from typing import Any

from ..config.diagnostics import Diagnostics
from ..config.loader import Workspace
from ..config.render import Secrets
from ..errors import AgentformError, ReadError
from ..kinds import kinds_in_order
from ..kinds.base import Declared, FieldChange, Kind, LiveObject, PlanContext
from ..kinds.references import References
from .fingerprint import fingerprint, secret_digest
from .model import Change, NoOp, Plan, Summary


@dataclass
class LiveState:
    organization_id: str
    organization_name: str
    objects: dict[str, dict[str, LiveObject]]  # kind -> key -> object (presets left out)
    presets: dict[str, int]
    references: References


def managed_keys(workspace: Workspace, kind: Kind) -> set[str]:
    return {d.key for d in workspace.declared[kind.name] if d.model.ensure == "present"}


class Everything:
    """A `managed` set that holds every key: export reads every object in depth."""

    def __contains__(self, key: object) -> bool:
        return True


async def read_live(
    workspace: Workspace,
    api: Any,
    depth: dict[str, Container[str]] | None = None,
    references: set[str] | None = None,
) -> LiveState:
    """Every kind's collection (one list read each) plus deep reads of managed keys."""
    context = await api.request("GET", "/context")
    wanted_org = workspace.settings.organization_id
    if wanted_org and wanted_org != context["organizationId"]:
        raise AgentformError(
            f"the API key belongs to organization {context['organizationId']}, "
            f"not {wanted_org} (organizationId in agentform.yaml)"
        )
    kinds = kinds_in_order()
    refs = References(api)
    needed = (
        references
        if references is not None
        else {r for k in kinds for r in k.references_needed(workspace.declared[k.name])}
    )
    depth = depth if depth is not None else {k.name: managed_keys(workspace, k) for k in kinds}
    results = await asyncio.gather(
        refs.load(needed),
        *(k.read_live(api, depth.get(k.name, set())) for k in kinds),
    )
    objects: dict[str, dict[str, LiveObject]] = {}
    presets: dict[str, int] = {}
    for kind, live in zip(kinds, results[1:], strict=True):
        assert live is not None
        by_key: dict[str, LiveObject] = {}
        for obj in live:
            if obj.preset:
                presets[kind.name] = presets.get(kind.name, 0) + 1
                continue
            if obj.key in by_key:
                raise ReadError(
                    f"{kind.name}: two live objects are named '{obj.key}' "
                    f"({by_key[obj.key].id}, {obj.id}); agentform will not guess"
                )
            by_key[obj.key] = obj
        objects[kind.name] = by_key
    return LiveState(context["organizationId"], context["organizationName"], objects, presets, refs)


def _protected(workspace: Workspace, kind: Kind, key: str) -> bool:
    return any(fnmatch.fnmatchcase(key, g) for g in workspace.settings.protect.get(kind.name, []))


async def make_plan(workspace: Workspace, api: Any, endpoint: str) -> Plan:
    live = await read_live(workspace, api)
    return diff_plan(workspace, live, endpoint)


@dataclass
class _Decisions:
    """What planning decided so far, kind by kind."""

    ctx: PlanContext
    changes: list[Change] = field(default_factory=list)
    deletes: list[list[Change]] = field(default_factory=list)  # per kind, in kind order
    noops: list[NoOp] = field(default_factory=list)
    unmanaged: dict[str, int] = field(default_factory=dict)
    fingerprints: dict[str, str] = field(default_factory=dict)


def _declared(
    workspace: Workspace, kind: Kind, item: Declared, obj: LiveObject | None, out: _Decisions
) -> None:
    key, ctx = item.key, out.ctx
    cid = f"{kind.name}/{key}"
    out.fingerprints[cid] = fingerprint(obj.raw if obj else None)
    if item.model.ensure == "absent":
        if obj is None:
            out.noops.append(NoOp(kind=kind.name, key=key, reason="declared absent, not in live"))
        elif _protected(workspace, kind, key):
            ctx.diagnostics.error(
                f"{kind.name} {key} is declared absent but protected (protect in agentform.yaml)",
                item.position,
            )
        else:
            out.deletes[-1].append(_delete(kind, obj, "declared absent", ctx))
        return
    desired = kind.desired_state(item, ctx)
    if desired is None:
        return
    if obj is None:
        missing = [f for f in kind.required_to_create() if f not in desired.model_fields_set]
        if missing:
            needs = " and ".join(repr(f) for f in missing)
            ctx.diagnostics.error(
                f"{kind.label} {key} does not exist yet; creating it needs {needs}", item.position
            )
            return
        out.changes.append(
            Change(
                id=cid,
                kind=kind.name,
                key=key,
                action="create",
                reason="not in live",
                after=kind.show(desired, ctx),
                calls=kind.create_calls(desired),
            )
        )
        return
    field_changes = [
        _hide_secrets(c, workspace.secrets) for c in kind.diff(desired, obj.state, ctx)
    ]
    if not field_changes:
        out.noops.append(NoOp(kind=kind.name, key=key, reason="matches live"))
        return
    names = [c.field for c in field_changes]
    reason = f"field {names[0]} differs" if len(names) == 1 else f"fields {', '.join(names)} differ"
    out.changes.append(
        Change(
            id=cid,
            kind=kind.name,
            key=key,
            action="update",
            reason=reason,
            liveId=obj.id,
            changedFields=field_changes,
            before=_masked(kind.show(obj.state, ctx), field_changes),
            after=_masked(kind.show(desired, ctx), field_changes),
            calls=kind.update_calls(obj, desired, set(names)),
        )
    )


def _hide_secrets(change: FieldChange, secrets: Secrets) -> FieldChange:
    """A change of a value that holds a secret() shows no value, only that it changed."""
    values = json.dumps([change.before, change.after], default=str)
    if not secrets.is_sensitive(values):
        return change
    return FieldChange(field=change.field, sensitive=True)


def _masked(shown: dict[str, Any], changes: list[FieldChange]) -> dict[str, Any]:
    hidden = {c.field for c in changes if c.sensitive}
    return {k: Secrets.MASK if k in hidden else v for k, v in shown.items()}


def _undeclared(workspace: Workspace, kind: Kind, obj: LiveObject, out: _Decisions) -> None:
    pruned = kind.name in workspace.settings.prune
    if pruned and not _protected(workspace, kind, obj.key):
        out.fingerprints[f"{kind.name}/{obj.key}"] = fingerprint(obj.raw)
        out.deletes[-1].append(_delete(kind, obj, "pruned: not declared", out.ctx))
        return
    why = "protected" if pruned else "not declared"
    out.noops.append(NoOp(kind=kind.name, key=obj.key, reason=f"not managed ({why})"))
    out.unmanaged[kind.name] = out.unmanaged.get(kind.name, 0) + 1


def diff_plan(workspace: Workspace, live: LiveState, endpoint: str) -> Plan:
    diags = Diagnostics()
    out = _Decisions(PlanContext(live.references, diags))
    for kind in kinds_in_order():
        out.deletes.append([])
        existing = live.objects[kind.name]
        declared = workspace.declared[kind.name]
        for item in declared:
            _declared(workspace, kind, item, existing.get(item.key), out)
        for key in sorted(set(existing) - {d.key for d in declared}):
            _undeclared(workspace, kind, existing[key], out)
    diags.raise_if_errors()
    # Deletes go last, kinds in reverse dependency order, names in order within a kind.
    all_changes = out.changes + [c for group in reversed(out.deletes) for c in group]
    noops, unmanaged, fingerprints = out.noops, out.unmanaged, out.fingerprints
    salt = pysecrets.token_hex(8)
    return Plan(
        workspace=workspace.settings.workspace,
        endpoint=endpoint,
        organizationId=live.organization_id,
        organizationName=live.organization_name,
        changes=all_changes,
        noops=noops,
        unmanaged=unmanaged,
        summary=Summary(
            create=sum(c.action == "create" for c in all_changes),
            update=sum(c.action == "update" for c in all_changes),
            delete=sum(c.action == "delete" for c in all_changes),
            unchanged=sum(n.reason == "matches live" for n in noops),
            unmanaged=sum(unmanaged.values()),
        ),
        inputsDigest=workspace.inputs_digest,
        fingerprints={c.id: fingerprints[c.id] for c in all_changes},
        reads={k.name: sorted(managed_keys(workspace, k)) for k in kinds_in_order()},
        secretDigests={
            n: secret_digest(salt, n, v) for n, v in sorted(workspace.secrets.values.items())
        },
        secretSalt=salt,
    )


def _delete(kind: Kind, obj: LiveObject, reason: str, ctx: PlanContext) -> Change:
    return Change(
        id=f"{kind.name}/{obj.key}",
        kind=kind.name,
        key=obj.key,
        action="delete",
        reason=reason,
        liveId=obj.id,
        before=kind.show(obj.state, ctx),
        calls=kind.delete_calls(obj),
    )
