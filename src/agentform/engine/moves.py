"""What each `moved` entry does against the live objects, before the plan is decided.

- `from` live, `to` not live: the object is renamed in place. Its live object is
  put under its new key (and its children under their parent's new key), so the
  planner diffs it against the declaration like any other object and records a
  rename: one PATCH of the name and of whatever else differs.
- A kind whose name cannot be patched (batches): the new object is created as
  declared and the old one deleted (a batch: cancelled), with a warning saying why.
- `from` not live: the rename is done (or never was needed): nothing, with a note,
  so the entry can stay in the files.
- both live: the entry is not followed (a warning); each is planned as it is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from agentform.config.moved import Move
from agentform.core.secrets import Secrets
from agentform.engine.decisions import Decisions
from agentform.engine.live import LiveState, canonical_key
from agentform.engine.model import NoOp, PlanWarning
from agentform.kinds import Kind, kinds_in_order
from agentform.kinds.keys import Key, address
from agentform.kinds.model import Decision, Declared, FieldChange, LiveObject, State


@dataclass
class Moves:
    objects: dict[str, dict[Key, LiveObject]]  # the live objects under their new keys
    renamed: dict[str, Key] = field(default_factory=dict)  # new address -> old key
    replaced: dict[str, str] = field(default_factory=dict)  # old address -> new address
    noops: list[NoOp] = field(default_factory=list)
    warnings: list[PlanWarning] = field(default_factory=list)


def resolve_moves(moves: Sequence[Move], live: LiveState) -> Moves:
    """The live objects as the moves leave them, and what each move does."""
    out = Moves({kind: dict(objects) for kind, objects in live.objects.items()})
    for move in moves:
        kind = Kind.registry[move.kind]
        source = canonical_key(kind, move.source, live.references)
        target = canonical_key(kind, move.target, live.references)
        objects = out.objects.get(kind.name, {})
        old, new = address(kind.name, source), address(kind.name, target)
        if source not in objects:
            out.noops.append(
                NoOp(
                    kind=kind.name,
                    key=str(source),
                    reason=f"moved to {new}: no live object is named so (renamed already)",
                )
            )
        elif target in objects:
            out.warnings.append(
                PlanWarning(
                    message=f"moved: both {old} and {new} exist; the entry is not followed "
                    "(each is planned as it is: delete one, or remove the entry)",
                    address=old,
                    position=str(move.position),
                )
            )
        elif kind.not_renamable:
            out.replaced[old] = new
            out.warnings.append(
                PlanWarning(
                    message=f"moved: {kind.not_renamable}, so {new} is created as declared "
                    f"and {old} goes as if declared absent (see its change)",
                    address=old,
                    position=str(move.position),
                )
            )
        else:
            _rename(out, kind, source, target)
    return out


def _rename(out: Moves, kind: Kind, source: Key, target: Key) -> None:
    objects = out.objects[kind.name]
    objects[target] = dataclasses.replace(objects.pop(source), key=target)
    out.renamed[address(kind.name, target)] = source
    for child in kinds_in_order():
        if child.parent != kind.name:
            continue
        children = out.objects.get(child.name, {})
        for key in [k for k in children if child.parent_key(k) == source]:
            moved_key = child.under_parent(key, target)
            children[moved_key] = dataclasses.replace(children.pop(key), key=moved_key)


def record_rename(
    out: Decisions,
    kind: Kind,
    key: Key,
    item: Declared,
    obj: LiveObject,
    desired: State,
    changes: list[FieldChange],
    secrets: Secrets,
) -> None:
    """The rename of `obj` to `key`: one PATCH of its name and of the fields in
    `changes` (its other fields, members and children are left as they are)."""
    ctx = out.ctx
    old = out.renamed[address(kind.name, key)]
    name = "name"  # every kind that can be renamed has one
    named = FieldChange(field=name, before=getattr(obj.state, name), after=getattr(desired, name))
    calls = tuple(kind.update_calls(obj, desired, {"name", *(c.field for c in changes)}))
    decision = Decision(
        "rename", f"moved from {address(kind.name, old)}: renamed in place, keeps its id", calls
    )
    after = kind.show(desired, ctx)
    before = secrets.learn(kind.show(obj.state, ctx), after, kind.set_fields)
    out.record(kind, key, "rename", decision, item, obj, before, after, [named, *changes])
