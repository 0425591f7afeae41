"""Drift: what a read-only plan says about the service, classified for a report.

A change the plan would make means the service drifted from the files: an update
is a field changed in the service, a create an object missing in the service, a
delete of a pruned kind an object present in the service but not declared, and
a delete of an object declared absent one that exists all the same.
"""

from __future__ import annotations

from typing import Literal

from agentform.core.frozen import FrozenJson
from agentform.engine.model import Change, Plan, PlanWarning
from agentform.kinds.model import FieldChange, Frozen

DriftClass = Literal["changed", "missing", "undeclared", "declaredAbsent"]
DRIFT_CLASSES: dict[str, str] = {
    "changed": "changed in the service",
    "missing": "missing in the service",
    "undeclared": "present in the service but not declared",
    "declaredAbsent": "present in the service but declared absent",
}
FORMAT_VERSION = 1


class DriftItem(Frozen):
    id: str
    kind: str
    key: str
    drift: DriftClass
    reason: str
    fields: tuple[FieldChange, ...] = ()  # for "changed": the service (before), files (after)
    object: FrozenJson = None  # the object as the files or the service hold it


class DriftReport(Frozen):
    formatVersion: int = FORMAT_VERSION
    workspace: str
    environment: str | None = None
    endpoint: str
    organizationId: str
    organizationName: str
    items: tuple[DriftItem, ...]
    warnings: tuple[PlanWarning, ...] = ()

    @property
    def drifted(self) -> bool:
        return bool(self.items)

    def counts_by_label(self) -> dict[str, int]:
        return {
            label: sum(i.drift == cls for i in self.items) for cls, label in DRIFT_CLASSES.items()
        }


def classify(change: Change) -> DriftClass:
    if change.action == "create":
        return "missing"
    if change.action in ("delete", "cancel"):
        return "undeclared" if change.reason.startswith("pruned") else "declaredAbsent"
    return "changed"


def drift_of(plan: Plan) -> DriftReport:
    items = []
    for change in (*plan.changes, *plan.cannotApply):
        cls = classify(change)
        items.append(
            DriftItem(
                id=change.id,
                kind=change.kind,
                key=change.key,
                drift=cls,
                reason=change.reason,
                fields=change.changedFields,
                object=change.after
                if cls == "missing"
                else None
                if cls == "changed"
                else change.before,
            )
        )
    return DriftReport(
        workspace=plan.workspace,
        environment=plan.environment,
        endpoint=plan.endpoint,
        organizationId=plan.organizationId,
        organizationName=plan.organizationName,
        items=items,
        warnings=plan.warnings,
    )
