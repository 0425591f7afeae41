"""Planning: read live state, normalise both sides into one model per kind, diff,
and return a Plan. Deletes only when asked (ensure: absent, prune, a parent's
complete set of children); protect and presets are never deleted.

Kinds are decided in level order, so the creates a kind's objects need (a new
integration for its attachments, a new pool a batch names) are known when it
is decided: their ids become slots, "(known after create)" in the plan.
"""

from __future__ import annotations

import dataclasses
import secrets as pysecrets
from typing import Any

from agentform.config.loader import Workspace
from agentform.config.owns import is_owned
from agentform.config.protect import is_protected
from agentform.core.diagnostics import Diagnostics
from agentform.core.gcpause import collector_paused
from agentform.core.secrets import Secrets
from agentform.core.sensitive import contains_sensitive
from agentform.engine.decisions import Decisions
from agentform.engine.fingerprint import fingerprint, secret_digest
from agentform.engine.live import LiveState, declares, managed_keys, read_live
from agentform.engine.model import NoOp, Plan, PlanWarning, recordable, summarise
from agentform.engine.moves import record_rename, resolve_moves
from agentform.engine.order import stages
from agentform.engine.targets import check_patterns, select
from agentform.kinds import Kind, kinds_in_order
from agentform.kinds.context import PlanContext, PlanOptions
from agentform.kinds.keys import Key, address
from agentform.kinds.model import Declared, FieldChange, LiveObject, State
from agentform.kinds.references import References

__all__ = ["LiveState", "diff_plan", "make_plan", "managed_keys", "read_live"]


def _protected(workspace: Workspace, kind: Kind, key: Key) -> bool:
    return is_protected(workspace.settings.protect, kind.name, str(key))


async def make_plan(
    workspace: Workspace, api: Any, endpoint: str, options: PlanOptions | None = None
) -> Plan:
    options = options or PlanOptions()
    check_patterns([*options.targets, *options.excludes])  # before any call
    live = await read_live(workspace, api)
    plan = diff_plan(workspace, live, endpoint, options)
    return select(plan, options.targets, options.excludes)


def _declared(
    workspace: Workspace,
    kind: Kind,
    key: Key,
    item: Declared,
    obj: LiveObject | None,
    out: Decisions,
    preset: bool = False,  # a preset has the key (presets are never managed)
) -> None:
    """Decides one declared object: delete (declared absent), create, update, or nothing."""
    ctx = out.ctx
    out.read_as[address(kind.name, key)] = obj.raw if obj else None
    secrets = workspace.secrets
    if not item.present:  # protect was checked with the files
        _declared_absent(secrets, kind, key, item, obj, out)
        return
    desired = kind.desired_state(item, ctx, obj)
    if desired is None:
        return
    if obj is None:
        _create(secrets, kind, key, item, desired, out, preset)
        return
    field_changes = [_hide_secrets(c, secrets) for c in kind.diff(desired, obj, ctx)]
    if address(kind.name, key) in out.renamed:
        record_rename(out, kind, key, item, obj, desired, field_changes, secrets)
        return
    if not field_changes:
        out.noops.append(NoOp(kind=kind.name, key=str(key), reason="matches live"))
        return
    decision = kind.decide_update(obj, desired, field_changes, ctx)
    after = kind.show(desired, ctx)  # typed: its secret() values are Sensitive
    out.record(
        kind,
        key,
        "update",
        decision,
        item,
        obj,
        before=secrets.learn(kind.show(obj.state, ctx), after, kind.set_fields),
        after=after,
        changed=field_changes,
    )


def _declared_absent(
    secrets: Secrets,
    kind: Kind,
    key: Key,
    item: Declared,
    obj: LiveObject | None,
    out: Decisions,
) -> None:
    """An object declared `ensure: absent`: deleted when live, else nothing to do."""
    if obj is None:
        out.noops.append(NoOp(kind=kind.name, key=str(key), reason="declared absent, not in live"))
        return
    decision = kind.decide_delete(obj, "declared absent", out.ctx)
    before = secrets.mark(kind.show(obj.state, out.ctx))
    out.record(kind, key, "delete", decision, item, obj, before=before)


def _create(
    secrets: Secrets,
    kind: Kind,
    key: Key,
    item: Declared,
    desired: State,
    out: Decisions,
    preset: bool,
) -> None:
    """A declared object not in live: created, unless it leaves out a field creating
    it needs (an error at the declaration)."""
    ctx = out.ctx
    missing = [f for f in kind.required_to_create() if f not in desired.model_fields_set]
    if missing:
        needs = " and ".join(repr(f) for f in missing)
        also = (
            " (a preset of that name exists: presets are never changed, so this declares "
            "one of your own)"
            if preset
            else ""
        )
        ctx.diagnostics.error(
            f"{kind.label} {key} does not exist yet; creating it needs {needs}{also}",
            item.position,
        )
        return
    decision = kind.decide_create(desired, ctx, item)
    out.record(kind, key, "create", decision, item, after=kind.show(desired, ctx))


def _hide_secrets(change: FieldChange, secrets: Secrets) -> FieldChange:
    """A change of a value that holds a sensitive value shows no value, only that
    it changed (a set shows which of its elements are sensitive). The live value
    of a field the files fill with secret() is an earlier value of that secret:
    it is learned, so it is masked everywhere. Values are masked by their type
    only: a field that is not secret is shown as written, whatever its text."""
    if change.sensitive:
        return change
    after = change.after  # typed, as the files give it
    is_set = change.added is not None or change.removed is not None
    before = change.before if is_set else secrets.learn(change.before, after)
    if not (contains_sensitive(after) or contains_sensitive(before)):
        return change
    if is_set:
        return change.but(
            before=before,
            after=after,
            added=change.added,
            removed=secrets.mark(change.removed),  # live elements: no type to go by
        )
    return FieldChange(field=change.field, sensitive=True)


def _delete(workspace: Workspace, kind: Kind, obj: LiveObject, why: str, out: Decisions) -> None:
    out.read_as[address(kind.name, obj.key)] = obj.raw
    decision = kind.decide_delete(obj, why, out.ctx)
    before = workspace.secrets.mark(kind.show(obj.state, out.ctx))
    out.record(kind, obj.key, "delete", decision, None, obj, before=before)


def _undeclared(
    workspace: Workspace, kind: Kind, obj: LiveObject, scopes: set[Key], out: Decisions
) -> None:
    """A live object the files do not declare: deleted (pruned, moved away, a child of
    a parent listing its children), or not managed; another workspace's: left alone."""
    cid = address(kind.name, obj.key)
    if not is_owned(workspace.settings.owns, kind, obj.key):
        out.noops.append(NoOp(kind=kind.name, key=str(obj.key), reason="not owned (owns)"))
        return  # another workspace's: never deleted, never counted
    if cid in out.replaced and not _protected(workspace, kind, obj.key):
        _delete(workspace, kind, obj, f"moved to {out.replaced[cid]}", out)
        return
    if kind.parent is not None:
        parent = address(kind.parent, kind.parent_key(obj.key))
        if kind.parent_key(obj.key) in scopes:
            field_name = next(
                f for f, c in Kind.registry[kind.parent].children.items() if c == kind.name
            )
            _delete(workspace, kind, obj, f"not in the {field_name} of {parent}", out)
            return
        why = f"not managed ({parent} does not list its {kind.label}s)"
    else:
        pruned = kind.name in workspace.settings.prune
        if pruned and not _protected(workspace, kind, obj.key):
            _delete(workspace, kind, obj, "pruned: not declared", out)
            return
        why = "not managed (protected)" if pruned else "not managed (not declared)"
    out.noops.append(NoOp(kind=kind.name, key=str(obj.key), reason=why))
    out.unmanaged[kind.name] = out.unmanaged.get(kind.name, 0) + 1


def _keyed(
    kind: Kind, declared: list[Declared], refs: References, diags: Diagnostics
) -> list[tuple[Key, Declared]]:
    """Declarations with their canonical keys; two spellings of one key are an error."""
    seen: dict[Key, Declared] = {}
    out = []
    for item in declared:
        key = kind.key_of(item, refs)
        if key in seen:
            diags.error(
                f"{kind.name}: '{key}' is declared twice (first at {seen[key].position})",
                item.position,
            )
            continue
        seen[key] = item
        out.append((key, item))
    return out


def _decide_kind(workspace: Workspace, live: LiveState, kind: Kind, out: Decisions) -> None:
    """Every declared object of `kind`, then every live one the files do not declare."""
    diags = out.ctx.diagnostics
    out.backward.append([])
    existing = live.objects[kind.name]
    keyed = _keyed(kind, workspace.declared[kind.name], live.references, diags)
    for key, item in keyed:
        preset = key in live.presets.get(kind.name, ())
        if not item.present and preset:
            diags.error(  # as a protected object declared absent is (config/protect.py)
                f"{kind.name} {key} is declared absent but is a preset of the service: "
                "presets are never deleted (remove it from the files)",
                item.position,
            )
            continue
        _declared(workspace, kind, key, item, existing.get(key), out, preset)
    scopes = managed_keys(workspace, kind, live.references) if kind.parent else set()
    for key in sorted(set(existing) - {k for k, _ in keyed}):
        _undeclared(workspace, kind, existing[key], scopes, out)


def _reads(workspace: Workspace, live: LiveState) -> dict[str, tuple[str, ...]]:
    """The keys each kind the files declare was read in depth at: what a saved plan
    reads again (a kind they do not declare is left out, so a new kind changes
    no plan)."""
    return {
        kind: tuple(sorted(str(key) for key in keys))
        for kind, keys in live.reads.items()
        if declares(workspace, Kind.registry[kind])
    }


def diff_plan(
    workspace: Workspace, live: LiveState, endpoint: str, options: PlanOptions | None = None
) -> Plan:
    """The plan of `workspace` against `live`, decided with the cyclic collector paused:
    the decisions make tens of thousands of objects and no cycles, and each full
    collection would scan the workspace and the live state again (a third of the
    diff's time at 10,000 objects). The plan is then frozen out of later collections
    (core/gcpause.py)."""
    with collector_paused(keep=True):
        return _diff(workspace, live, endpoint, options)


def _diff(
    workspace: Workspace, live: LiveState, endpoint: str, options: PlanOptions | None
) -> Plan:
    diags = Diagnostics()
    moves = resolve_moves(workspace.settings.moves, live)
    live = dataclasses.replace(live, objects=moves.objects)
    ctx = PlanContext(live.references, diags, options or PlanOptions(), live.objects)
    out = Decisions(ctx, renamed=moves.renamed, replaced=moves.replaced)
    out.noops += moves.noops
    out.warnings += moves.warnings
    for kind in kinds_in_order():
        _decide_kind(workspace, live, kind, out)
    diags.raise_if_errors()
    loaded = [
        PlanWarning(
            message=w.summary,
            address=w.address,
            position=str(w.position) if w.position else None,
        )
        for w in [*workspace.warnings, *diags.warnings]
    ]
    backward = [c for group in reversed(out.backward) for c in group]
    ordered = tuple(c for stage in stages(out.forward + backward) for c in stage)
    salt = pysecrets.token_hex(8)
    return Plan(
        workspace=workspace.settings.workspace,
        environment=workspace.settings.environment,
        vars=recordable(workspace.variables, workspace.secrets.scrub_shown),
        varOverrides=recordable(workspace.var_overrides, workspace.secrets.scrub_shown),
        endpoint=endpoint,
        organizationId=live.organization_id,
        organizationName=live.organization_name,
        changes=ordered,
        noops=tuple(out.noops),
        cannotApply=tuple(out.cannot_apply),
        unmanaged=out.unmanaged,
        warnings=(*loaded, *out.warnings),
        summary=summarise(
            ordered,
            unchanged=sum(n.reason == "matches live" for n in out.noops),
            unmanaged=sum(out.unmanaged.values()),
        ),
        inputsDigest=workspace.inputs_digest,
        inputDigests=workspace.input_digests,
        fingerprints={c.id: fingerprint(out.read_as[c.id]) for c in ordered},
        reads=_reads(workspace, live),
        secretDigests={
            n: secret_digest(salt, n, v) for n, v in sorted(workspace.secrets.values.items())
        },
        secretSalt=salt,
        allowPastStart=ctx.options.allow_past_start,
        allowCancelRunning=ctx.options.allow_cancel_running,
    )
