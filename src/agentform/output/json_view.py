"""The JSON view: stable, versioned documents of a plan, an apply report and a drift
report. A plan's JSON is the saved-plan format itself (secret values masked)."""

from __future__ import annotations

import json
from typing import Any

from ..config.render import Secrets
from ..engine.apply import ApplyReport
from ..engine.drift import DriftReport
from ..engine.model import Plan
from ..engine.planfile import dump_plan

REPORT_FORMAT_VERSION = 1


def plan_json(plan: Plan, secrets: Secrets) -> str:
    return dump_plan(plan, secrets)


def report_document(report: ApplyReport, workspace: str) -> dict[str, Any]:
    return {
        "formatVersion": REPORT_FORMAT_VERSION,
        "workspace": workspace,
        "succeeded": report.count("succeeded"),
        "failed": report.count("failed"),
        "notAttempted": report.count("not attempted"),
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


def report_json(report: ApplyReport, workspace: str, secrets: Secrets) -> str:
    return secrets.scrub(json.dumps(report_document(report, workspace), indent=2)) + "\n"


def drift_json(drift: DriftReport, secrets: Secrets) -> str:
    document = drift.model_dump(mode="json")
    document["drifted"] = drift.drifted
    return secrets.scrub(json.dumps(document, indent=2, ensure_ascii=False)) + "\n"
