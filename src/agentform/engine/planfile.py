"""Saved plans: written with secret values masked; an assertion checked before apply.

`apply plan.json` makes the plan again from the files and the live state and
executes that, only when it is exactly the saved plan: an edited file can refuse
an apply, never steer one. The words of the common refusals (the files changed,
a live object moved, a secret's value is not the one the plan was made with)
come first.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import to_json

from agentform.config.loader import Workspace
from agentform.core.errors import AgentformError, StalePlanError
from agentform.core.sensitive import as_marked
from agentform.core.words import counted
from agentform.engine.fingerprint import secret_digest
from agentform.engine.model import FORMAT_VERSION, Plan
from agentform.engine.planner import make_plan
from agentform.kinds.base import Kind
from agentform.kinds.context import PlanOptions


def dump_plan(plan: Plan) -> str:
    """The plan as JSON: each sensitive value as its `((secret:NAME))` markers (or
    the mask), by their type: no text is searched."""
    return plan.model_dump_json(indent=2, fallback=as_marked) + "\n"


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
    version = data["formatVersion"]
    if type(version) is not int:  # "2", 2.0, true: not what `plan --out` writes
        raise AgentformError(
            f"the plan file's formatVersion is {json.dumps(version)[:40]}: it must be the "
            f"number {FORMAT_VERSION} (make the plan again: agentform plan --out FILE)"
        )
    if version != FORMAT_VERSION:
        raise AgentformError(
            f"the plan file has format {data['formatVersion']}, this agentform reads format "
            f"{FORMAT_VERSION}: make the plan again (agentform plan --out FILE)"
        )
    try:
        return Plan.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise AgentformError(
            f"the plan file is damaged: {counted(exc.error_count(), 'problem')}, "
            f"the first at {where}: {first['msg']}"
        ) from None


async def verified_plan(
    saved: Plan,
    workspace: Workspace,
    api: Any,
    endpoint: str,
    allowed: PlanOptions | None = None,
) -> Plan:
    """The plan `apply PLANFILE` executes: made again from the files and the live
    state, with the saved plan's targets and the allowances of the plan and of the
    apply (`allowed`), and returned only when it is exactly the saved one (same
    changes, same calls, same values). The file is an assertion, not a script:
    nothing it holds is sent.

    Refuses (StalePlanError, before any write) in the words of the common cases
    first: another workspace or organization, changed files, a change that time has
    made unsafe, a live object that moved, a secret whose value changed; then any
    other difference, named by change and field."""
    _refuse_elsewhere(saved, workspace, endpoint)
    allowed = allowed or PlanOptions()
    options = PlanOptions(
        allow_past_start=saved.allowPastStart or allowed.allow_past_start,
        allow_cancel_running=saved.allowCancelRunning or allowed.allow_cancel_running,
        now=allowed.now,
        targets=saved.targets,
        excludes=saved.excludes,
    )
    fresh = await make_plan(workspace, api, endpoint, options)
    if fresh.organizationId != saved.organizationId:
        raise StalePlanError(
            f"the plan is for organization {saved.organizationId}, not {fresh.organizationId}"
        )
    _refuse_other_fields(saved, fresh)
    _refuse_late(saved, options)
    moved = sorted(
        cid
        for cid in {*saved.fingerprints, *fresh.fingerprints}
        if saved.fingerprints.get(cid) != fresh.fingerprints.get(cid)
    )
    if moved:
        raise StalePlanError(
            f"plan is stale: {', '.join(moved)} changed since the plan was made; "
            "nothing was written"
        )
    _refuse_changed_secrets(saved, workspace)
    differences = plan_differences(saved, fresh)
    if differences:
        raise StalePlanError(
            "the saved plan is not what the files and the service imply now: "
            + "; ".join(differences)
            + "; nothing was written"
        )
    return fresh


def _refuse_elsewhere(saved: Plan, workspace: Workspace, endpoint: str) -> None:
    """Refuses, before any call, a plan of another workspace, files or endpoint."""
    if saved.workspace != workspace.settings.workspace:
        raise StalePlanError(
            f"the plan is for workspace {saved.workspace}, not {workspace.settings.workspace}"
        )
    if saved.environment != workspace.settings.environment:
        raise StalePlanError(
            f"the plan is for environment {saved.environment or '(none)'}, "
            f"not {workspace.settings.environment or '(none)'}"
        )
    _refuse_changed_vars(saved, workspace)
    if saved.inputsDigest != workspace.inputs_digest:
        changed = _files_changed(saved.inputDigests, workspace.input_digests)
        if saved.inputDigests and not changed:  # same files: the digest names its environment
            raise StalePlanError(
                "the plan was made for another environment than the one it names, or "
                "edited: its inputs' digest is not this environment's; nothing was written"
            )
        # The digests are of the files as rendered with the plan's own command-line
        # variables: an edit of those moves them as much as an edit of a file does.
        raise StalePlanError(
            "plan is stale: the workspace files render otherwise than when the plan was "
            "made (a file, a variable they read or the saved plan changed)" + changed
        )
    if saved.endpoint != endpoint:
        raise StalePlanError(
            f"the plan is for endpoint {saved.endpoint}, not {endpoint}: apply it where it "
            f"was made (--endpoint {saved.endpoint})"
        )


def _files_changed(then: Mapping[str, str], now: Mapping[str, str]) -> str:
    """` (changed: a.yaml; added: b.yaml; removed: c.yaml)`, or "" for a plan saved
    before plans recorded each file's digest."""
    if not then:
        return ""
    found = {
        "changed": [n for n in now if n in then and then[n] != now[n]],
        "added": [n for n in now if n not in then],
        "removed": [n for n in then if n not in now],
    }
    said = [f"{how}: {', '.join(sorted(names)[:10])}" for how, names in found.items() if names]
    return f" ({'; '.join(said)})" if said else ""


def _refuse_changed_vars(saved: Plan, workspace: Workspace) -> None:
    """The variables the plan records are what the files (the environment's vars and
    var files) and the plan's own command-line variables give now: the recorded
    values are never trusted as they are, only compared."""
    recorded = json.loads(saved.model_dump_json(include={"vars"}))["vars"]
    now = json.loads(to_json(workspace.variables, fallback=str))
    moved = sorted(n for n in recorded.keys() | now.keys() if recorded.get(n) != now.get(n))
    if moved:
        raise StalePlanError(
            f"plan is stale: variable {', '.join(moved[:10])} is not what the files give "
            "now; nothing was written"
        )


_CHECKED_APART = frozenset(
    {
        *("workspace", "environment", "endpoint", "organizationId", "inputsDigest", "inputDigests"),
        *("fingerprints", "secretDigests", "secretSalt", "vars", "varOverrides"),
        *("changes", "cannotApply", "targets", "excludes", "allowPastStart"),
        "allowCancelRunning",
    }
)
"""Fields of a saved plan checked by verified_plan in the words of their own refusal
(an allowance or a target is read, and checked by the changes it makes)."""
NOT_READ = frozenset({"noops", "unmanaged", "warnings", "summary", "reads", "policies"})
"""What the plan said of the organization when it was made, and the policies' verdicts
then: apply reads none of it (they may move without changing a call; apply judges
the plan again by the policies as they are); every other field is compared."""


def _refuse_other_fields(saved: Plan, fresh: Plan) -> None:
    """Every field neither checked apart nor left unread is what the fresh plan says
    (the organization's name: a plan shown for another organization is refused)."""
    for name in Plan.model_fields:
        if name in _CHECKED_APART or name in NOT_READ:
            continue
        if (was := getattr(saved, name)) != (now := getattr(fresh, name)):
            raise StalePlanError(
                f"the plan's {name} is {was!r}, not {now!r} as the files and the service "
                "say now; nothing was written"
            )


def _refuse_late(saved: Plan, options: PlanOptions) -> None:
    late = [
        f"{change.id}: {why}"
        for change in saved.changes
        if (kind := Kind.registry.get(change.kind))
        and (why := kind.stale_reason(change.action, change.calls, options))
    ]
    if late:
        raise StalePlanError(f"plan is stale: {'; '.join(late)}; nothing was written")


def _refuse_changed_secrets(saved: Plan, workspace: Workspace) -> None:
    values = workspace.secrets.values
    moved = [
        n
        for n, d in saved.secretDigests.items()
        if n not in values or secret_digest(saved.secretSalt, n, values[n]) != d
    ]
    if moved:
        raise StalePlanError(
            f"plan is stale: secret {', '.join(sorted(moved))} changed since the plan was made"
        )


_EXECUTED = ("changes", "cannotApply")
"""What a saved plan asserts exactly. Its other parts (no-ops, counts of objects not
managed, warnings) describe the organization and may move without changing a call."""


def _first_difference(old: Any, new: Any, path: str) -> str:
    """The path of the first place `old` and `new` (JSON) differ: `calls[0].body.name`."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(old.keys() | new.keys()):
            if old.get(key) != new.get(key):
                return _first_difference(old.get(key), new.get(key), f"{path}.{key}")
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            if a != b:
                return _first_difference(a, b, f"{path}[{i}]")
    return path


def plan_differences(saved: Plan, fresh: Plan) -> list[str]:
    """Where `saved` is not `fresh`, by change and field (secrets compared by their
    `((secret:NAME))` markers, so no value is needed or shown)."""
    said, now = (
        json.loads(p.model_dump_json(include=set(_EXECUTED), fallback=as_marked))
        for p in (saved, fresh)
    )
    found: list[str] = []
    for part in _EXECUTED:
        old = {c["id"]: c for c in said[part]}
        new = {c["id"]: c for c in now[part]}
        found += [
            f"{cid} is not a change the files and the service imply"
            for cid in old.keys() - new.keys()
        ]
        found += [f"{cid} is missing from the saved plan" for cid in new.keys() - old.keys()]
        for cid in sorted(old.keys() & new.keys()):
            fields = sorted(
                f for f in old[cid].keys() | new[cid].keys() if old[cid].get(f) != new[cid].get(f)
            )
            if fields:
                one = len(fields) == 1 and not fields[0].endswith("s")
                where = ", ".join(_first_difference(old[cid][f], new[cid][f], f) for f in fields)
                verb = "differs" if one else "differ"
                found.append(f"{cid}: {', '.join(fields)} {verb} (at {where})")
        if not found and [c["id"] for c in said[part]] != [c["id"] for c in now[part]]:
            found.append("the order of the changes differs")
    return sorted(found)
