"""What planning has decided so far, kind by kind: the changes (forward ones, and
the deletes and cancels run backwards, in reverse kind order), the objects left
as they are, and the warnings; the planner (planner.py) fills it, object by object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentform.engine.model import Change, NoOp, PlanWarning
from agentform.engine.slots import ids_needed, seal, shown
from agentform.kinds.base import Kind
from agentform.kinds.context import PlanContext
from agentform.kinds.keys import Key, address
from agentform.kinds.model import Action, ApiCall, Decision, Declared, FieldChange, LiveObject
from agentform.rules.requests import MAX_BODY, body_size, described


@dataclass
class Decisions:
    """What planning decided so far, kind by kind."""

    ctx: PlanContext
    forward: list[Change] = field(default_factory=list)
    backward: list[list[Change]] = field(default_factory=list)  # per kind, in kind order
    noops: list[NoOp] = field(default_factory=list)
    cannot_apply: list[Change] = field(default_factory=list)
    warnings: list[PlanWarning] = field(default_factory=list)
    unmanaged: dict[str, int] = field(default_factory=dict)
    # what each object read as, by change id: fingerprinted only for the changes
    read_as: dict[str, Any] = field(default_factory=dict)
    # `moved` entries (engine/moves.py): new address -> old key of an object renamed
    # in place; old address -> new address of one that cannot be renamed
    renamed: dict[str, Key] = field(default_factory=dict)
    replaced: dict[str, str] = field(default_factory=dict)

    def record(
        self,
        kind: Kind,
        key: Key,
        intent: Action,
        decision: Decision,
        item: Declared | None,
        live: LiveObject | None = None,
        before: dict[str, Any] | None = None,
        after: dict[str, Any] | None = None,
        changed: list[FieldChange] | None = None,
    ) -> None:
        """`intent`: the action that makes the object match the files; the decision
        takes it, another, or none (with a warning when the object then differs)."""
        cid = address(kind.name, key)
        for said in (decision.warning, decision.note):
            if said:
                position = str(item.position) if item else None
                self.warnings.append(PlanWarning(message=said, address=cid, position=position))
        if decision.action is None:
            self.noops.append(NoOp(kind=kind.name, key=str(key), reason=decision.reason))
            if not decision.warning:
                return  # nothing differs that matters (a finished batch is history)
        elif decision.action in ("create", "replace"):
            self.ctx.creating.add(cid)
        calls = tuple(seal(call, cid) for call in decision.calls)
        self._refuse_large_bodies(cid, calls, item)
        change = Change(
            id=cid,
            kind=kind.name,
            key=str(key),
            action=decision.action or intent,
            reason=decision.reason,
            liveId=live.id if live else None,
            parent=address(kind.parent, kind.parent_key(key)) if kind.parent else None,
            changedFields=tuple(
                c.but(**{k: shown(getattr(c, k)) for k in ("before", "after", "added", "removed")})
                for c in changed or []
            ),
            before=shown(before) if before is not None else None,
            after=shown(after) if after is not None else None,
            calls=calls,
            dependsOn=tuple(sorted({d for c in calls for d in ids_needed(c)} - {cid})),
        )
        if decision.action is None:
            self.cannot_apply.append(change)
        elif decision.action in ("cancel", "delete"):
            self.backward[-1].append(change)
        else:
            self.forward.append(change)

    def _refuse_large_bodies(
        self, cid: str, calls: tuple[ApiCall, ...], item: Declared | None
    ) -> None:
        """A call the service would answer with 413 is a plan error at the object, so a
        plan that reads well never fails at apply for its size."""
        for call in calls:
            if call.body is not None and (size := body_size(call.body)) > MAX_BODY:
                self.ctx.diagnostics.error(
                    f"{cid}: the request of {call.method} {call.path} would be {size:,} bytes, "
                    f"over the {described(MAX_BODY)} the service accepts in one request "
                    "(a batch: split its items across batches)",
                    item.position if item else None,
                )
