"""The JSON view: stable, versioned documents of a plan, an apply report and a drift
report. A plan's JSON is the saved-plan format itself (secret values masked).
Sensitive values are masked by their type, as in every view: no text is searched."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from agentform.core.frozen import thaw
from agentform.core.sensitive import masked
from agentform.engine.drift import DRIFT_CLASSES, DriftReport
from agentform.engine.model import Plan
from agentform.engine.planfile import dump_plan
from agentform.output.view import View

if TYPE_CHECKING:  # the apply engine imports httpx: an offline view must not
    from agentform.engine.apply import ApplyReport

REPORT_FORMAT_VERSION = 1


def plan_json(plan: Plan) -> str:
    return dump_plan(plan)


def report_document(
    report: ApplyReport, workspace: str, environment: str | None = None
) -> dict[str, Any]:
    return {
        "formatVersion": REPORT_FORMAT_VERSION,
        "workspace": workspace,
        "environment": environment,
        "succeeded": report.count("succeeded"),
        "alreadyInPlace": report.count("already in place"),
        "failed": report.count("failed"),
        "notAttempted": report.count("not attempted"),
        "interrupted": report.interrupted,
        "policyOverrides": [o.model_dump(mode="json") for o in report.overrides],
        "changes": [
            {
                "id": r.change.id,
                "action": r.change.action,
                "status": r.status,
                "error": r.error,
                "callsMade": r.calls_made,
            }
            for r in report.results
        ],
    }


def report_json(report: ApplyReport, workspace: str, environment: str | None = None) -> str:
    document = report_document(report, workspace, environment)
    return json.dumps(document, indent=2, default=masked) + "\n"


def drift_document(drift: DriftReport) -> dict[str, Any]:
    """Each drifted object and field: for a field, the service's value and the files'
    (a sensitive one says only that it differs)."""
    items = []
    for item in drift.items:
        fields = []
        for fc in item.fields:
            if fc.sensitive:
                fields.append({"field": fc.field, "sensitive": True})
            elif fc.added is not None or fc.removed is not None:
                fields.append(
                    {
                        "field": fc.field,
                        "onlyInService": thaw(fc.removed or ()),
                        "onlyInFiles": thaw(fc.added or ()),
                    }
                )
            else:
                fields.append(
                    {"field": fc.field, "service": thaw(fc.before), "files": thaw(fc.after)}
                )
        items.append(
            {
                "id": item.id,
                "kind": item.kind,
                "key": item.key,
                "drift": item.drift,
                "description": DRIFT_CLASSES[item.drift],
                "reason": item.reason,
                "fields": fields,
                "object": thaw(item.object),
            }
        )
    return {
        "formatVersion": drift.formatVersion,
        "workspace": drift.workspace,
        "environment": drift.environment,
        "endpoint": drift.endpoint,
        "organizationId": drift.organizationId,
        "organizationName": drift.organizationName,
        "drifted": drift.drifted,
        "counts": {cls: sum(i.drift == cls for i in drift.items) for cls in DRIFT_CLASSES},
        "items": items,
        "warnings": [w.model_dump(mode="json") for w in drift.warnings],
    }


def drift_json(drift: DriftReport) -> str:
    return json.dumps(drift_document(drift), indent=2, ensure_ascii=False, default=masked) + "\n"


class JsonView(View):
    """For programs: stable, versioned documents; progress goes to stderr."""

    name = "json"

    def plan(self, plan: Plan) -> str:
        return plan_json(plan)

    def drift(self, drift: DriftReport) -> str:
        return drift_json(drift)

    def report(self, report: ApplyReport, workspace: str, environment: str | None = None) -> str:
        return report_json(report, workspace, environment)
