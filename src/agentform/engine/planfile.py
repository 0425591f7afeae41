"""Saved plans: written with secret values masked, checked for staleness before apply.

`apply plan.json` executes exactly the saved plan, but first re-reads what the
plan touches and refuses, before any write, when a fingerprint moved, the
files changed, or a secret's value is not the one the plan was made with.
"""

from __future__ import annotations

import json
import re
from collections.abc import Container
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentform.config.loader import Workspace
from agentform.core.errors import AgentformError, StalePlanError
from agentform.core.sensitive import Part, SecretRef, Secrets, Sensitive, as_marked
from agentform.engine.fingerprint import fingerprint, secret_digest
from agentform.engine.model import FORMAT_VERSION, Plan
from agentform.engine.planner import read_live
from agentform.kinds.base import Kind, kinds_in_order
from agentform.kinds.context import PlanOptions
from agentform.kinds.keys import Key


def dump_plan(plan: Plan, secrets: Secrets) -> str:
    """The plan as JSON: each sensitive value as its `((secret:NAME))` markers (or
    the mask), and, as a last line of defence, no known value in any encoding."""
    return secrets.scrub_shown(plan.model_dump_json(indent=2, fallback=as_marked)) + "\n"


def read_plan(path: Path) -> Plan:
    """The plan saved in `path`; an error naming the file when it holds no plan (a
    workspace file given by mistake, a binary)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise AgentformError(_not_a_plan(path)) from None
    except OSError as exc:
        raise AgentformError(f"cannot read {path}: {exc.strerror or exc}") from None
    return load_plan(text, _not_a_plan(path))


def _not_a_plan(path: Path) -> str:
    return f"{path} is not a saved plan (the JSON file `agentform plan --out FILE` writes)"


def load_plan(text: str, not_a_plan: str = "the plan file is not an agentform plan") -> Plan:
    try:
        data = json.loads(text)
    except ValueError:
        raise AgentformError(not_a_plan) from None
    if not isinstance(data, dict) or "formatVersion" not in data or "changes" not in data:
        raise AgentformError(not_a_plan)
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
    """The plan with its secret markers made Sensitive values again, from the values
    resolved now (refused when a digest differs from the plan's)."""
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
    return Plan.model_validate(_restored(plan.model_dump(), values))


_MARKER = re.compile(r"\(\(secret:([^():]+)(:previous)?\)\)")


def _restored(value: Any, values: dict[str, str]) -> Any:
    if isinstance(value, str):
        if not _MARKER.search(value):
            return value
        parts: list[Part] = []
        at = 0
        for match in _MARKER.finditer(value):
            if match.start() > at:
                parts.append(value[at : match.start()])
            parts.append(SecretRef(match.group(1), previous=bool(match.group(2))))
            at = match.end()
        if at < len(value):
            parts.append(value[at:])
        if any(isinstance(p, SecretRef) and (p.previous or p.name not in values) for p in parts):
            return Sensitive(None, tuple(parts))  # an earlier value: shown masked, never sent
        text = "".join(values[p.name] if isinstance(p, SecretRef) else p for p in parts)
        return Sensitive(text, tuple(parts))
    if isinstance(value, dict):
        return {k: _restored(v, values) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_restored(v, values) for v in value]
    return value


async def check_fresh(
    plan: Plan, workspace: Workspace, api: Any, options: PlanOptions | None = None
) -> None:
    """Refuses (StalePlanError, before any write) a saved plan that no longer holds:
    another workspace or organization, changed files, a live object that moved, or
    a change that time has made unsafe (a batch whose startAt has passed since)."""
    if plan.workspace != workspace.settings.workspace:
        raise StalePlanError(
            f"the plan is for workspace {plan.workspace}, not {workspace.settings.workspace}"
        )
    if plan.inputsDigest != workspace.inputs_digest:
        raise StalePlanError("plan is stale: the workspace files changed since the plan was made")
    # a kind the plan does not list was read in depth nowhere (the files declare none)
    depth: dict[str, Container[Key]] = {kind.name: set() for kind in kinds_in_order()}
    depth.update({kind: {Key.parse(k) for k in keys} for kind, keys in plan.reads.items()})
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
    now = options or PlanOptions()
    late = [
        f"{change.id}: {why}"
        for change in plan.changes
        if (kind := Kind.registry.get(change.kind))
        and (why := kind.stale_reason(change.action, change.calls, now))
    ]
    if late:
        raise StalePlanError(f"plan is stale: {'; '.join(late)}; nothing was written")
