"""How the planner decides one object (engine/planner.py decides them kind by kind).

A declared object is created, updated, deleted (declared absent) or left as it is,
its secret() values masked in what the plan shows; a live object the files do not
declare is deleted when pruned, moved away or left out of a parent's complete set
of children, and otherwise not managed (protected, another workspace's, or simply
not declared).
"""

from __future__ import annotations

from agentform.config.loader import Workspace
from agentform.config.owns import is_owned
from agentform.config.protect import is_protected
from agentform.core.secrets import Secrets
from agentform.core.sensitive import contains_sensitive
from agentform.engine.decisions import Decisions
from agentform.engine.model import NoOp
from agentform.engine.moves import record_rename
from agentform.kinds import Kind
from agentform.kinds.keys import Key, address
from agentform.kinds.model import Declared, FieldChange, LiveObject, State


def _protected(workspace: Workspace, kind: Kind, key: Key) -> bool:
    return is_protected(workspace.settings.protect, kind.name, str(key))


def decide_declared(
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


def decide_undeclared(
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
