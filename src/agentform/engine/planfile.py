"""Saved plans: written with secret values masked, checked for staleness before apply.

`apply plan.json` executes exactly the saved plan, but first re-reads what the
plan touches and refuses, before any write, when a fingerprint moved, the
files changed, or a secret's value is not the one the plan was made with.
"""

from __future__ import annotations

import json
from collections.abc import Container
from typing import Any

from pydantic import ValidationError

from ..config.loader import Workspace
from ..config.render import Secrets
from ..errors import AgentformError, StalePlanError
from ..kinds.keys import Key
from .fingerprint import fingerprint, secret_digest
from .model import FORMAT_VERSION, Plan
from .planner import read_live


def _marker(name: str) -> str:
    return f"((secret:{name}))"


def _escaped(text: str) -> str:
    return json.dumps(text)[1:-1]


def dump_plan(plan: Plan, secrets: Secrets) -> str:
    text = plan.model_dump_json(indent=2)
    for name, val in sorted(secrets.values.items(), key=lambda kv: -len(kv[1])):
        if val:
            text = text.replace(_escaped(val), _marker(name))
    return text + "\n"


def load_plan(text: str) -> Plan:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise AgentformError(f"the plan file is not JSON: {exc}") from None
    if not isinstance(data, dict) or "formatVersion" not in data or "changes" not in data:
        raise AgentformError("the plan file is not an agentform plan")
    if data["formatVersion"] != FORMAT_VERSION:
        raise AgentformError(
            f"the plan file has format {data['formatVersion']}, this agentform reads format "
            f"{FORMAT_VERSION}: make the plan again (agentform plan --out FILE)"
        )
    try:
        return Plan.model_validate(data)
    except ValidationError as exc:
        raise AgentformError(f"the plan file is damaged: {exc.error_count()} problems") from None


def unmask(plan: Plan, workspace: Workspace) -> Plan:
    """The plan with secret markers replaced by the values resolved now (digests checked)."""
    values = workspace.secrets.values
    moved = [
        n
        for n, d in plan.secretDigests.items()
        if n not in values or secret_digest(plan.secretSalt, n, values[n]) != d
    ]
    if moved:
        raise StalePlanError(
            f"plan is stale: secret {', '.join(sorted(moved))} changed since the plan was made"
        )
    text = plan.model_dump_json()
    for name, val in values.items():
        text = text.replace(_marker(name), _escaped(val))
    return Plan.model_validate_json(text)


async def check_fresh(plan: Plan, workspace: Workspace, api: Any) -> None:
    if plan.workspace != workspace.settings.workspace:
        raise StalePlanError(
            f"the plan is for workspace {plan.workspace}, not {workspace.settings.workspace}"
        )
    if plan.inputsDigest != workspace.inputs_digest:
        raise StalePlanError("plan is stale: the workspace files changed since the plan was made")
    depth: dict[str, Container[Key]] = {
        kind: {Key.parse(k) for k in keys} for kind, keys in plan.reads.items()
    }
    live = await read_live(workspace, api, depth)
    if live.organization_id != plan.organizationId:
        raise StalePlanError(
            f"the plan is for organization {plan.organizationId}, not {live.organization_id}"
        )
    moved = []
    for change in plan.changes:
        obj = live.objects.get(change.kind, {}).get(Key.parse(change.key))
        if fingerprint(obj.raw if obj else None) != plan.fingerprints.get(change.id):
            moved.append(change.id)
    if moved:
        raise StalePlanError(
            "plan is stale: "
            + ", ".join(moved)
            + " changed since the plan was made; nothing was written"
        )
