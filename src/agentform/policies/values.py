"""The values a rule sees: a change, the plan's summary and changes, the workspace,
its environment and organization, as plain CEL data.

They are the plan's own values (as `plan --format json` shows them), with one
difference: a sensitive value is never among them. It stands as `(secret)` when it
holds a `secret()`, else `(sensitive)`, which `isSecret`, `isSensitive` and `isSet`
test; no rule can read the value, so no message can print it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from agentform.config.loader import Workspace
from agentform.core.sensitive import SecretRef, Sensitive
from agentform.engine.model import Change, Plan
from agentform.kinds.base import Kind
from agentform.kinds.keys import address
from agentform.policies.expressions import SECRET, SENSITIVE


def cel_value(value: Any) -> Any:
    """`value` (a plan's frozen JSON) as plain data, sensitive values as their token."""
    if isinstance(value, Sensitive):
        holds_secret = value.parts is not None and any(
            isinstance(p, SecretRef) for p in value.parts
        )
        return SECRET if holds_secret else SENSITIVE
    if isinstance(value, dict):
        return {str(k): cel_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [cel_value(v) for v in value]
    if isinstance(value, str):  # a key or a name may be a str subclass: the runtime
        return str(value)  # would read such a one as ""
    return value


Place = tuple[str | int, ...]


def secret_paths(workspace: Workspace) -> dict[str, set[Place]]:
    """By address, the places in each declared object whose value holds a secret():
    a plan's values show every sensitive value alike (a header's value, written with
    secret() or not), the files know which is which."""
    found: dict[str, set[Place]] = {}
    for kind_name, declared in workspace.declared.items():
        kind = Kind.registry[kind_name]
        for item in declared:
            paths = set(_secret_places(item.model, ()))
            if paths:
                found[address(kind_name, kind.key_of(item))] = paths
    return found


def _secret_places(value: Any, at: Place) -> Iterator[Place]:
    if isinstance(value, Sensitive):
        if any(isinstance(p, SecretRef) for p in value.parts or ()):
            yield at
    elif isinstance(value, BaseModel):
        for name in value.model_fields_set:
            yield from _secret_places(getattr(value, name), (*at, name))
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield from _secret_places(inner, (*at, str(key)))
    elif isinstance(value, list | tuple):
        for i, inner in enumerate(value):
            yield from _secret_places(inner, (*at, i))


def _marked_secret(after: Any, paths: set[Place]) -> Any:
    """`after` with the sensitive values at `paths` as the token of a secret."""
    for path in paths:
        holder = after
        for part in path[:-1]:
            holder = holder.get(part) if isinstance(holder, dict) else None
        if isinstance(holder, dict) and holder.get(path[-1]) == SENSITIVE:
            holder[path[-1]] = SECRET
    return after


def _object(value: Any, kind: Kind | None, reads: frozenset[str] | None) -> Any:
    """An object's values (only the fields `reads` names, unless None); its kind's
    sensitive maps (a webhook's headers, shown by the plan as the mask's text) each
    value the token of a sensitive value."""
    if reads is not None and isinstance(value, dict):
        value = {k: value[k] for k in reads if k in value}
    data = cel_value(value)
    for field in kind.sensitive_fields if kind and isinstance(data, dict) else ():
        if isinstance(data.get(field), dict):
            data[field] = dict.fromkeys(data[field], SENSITIVE)
    return data


def change_data(
    change: Change,
    secrets: dict[str, set[Place]] | None = None,
    reads: frozenset[str] | None = None,
) -> dict[str, Any]:
    """A change as rules see it; with `reads`, its objects hold only those fields."""
    kind = Kind.registry.get(change.kind)
    after = _object(change.after, kind, reads)
    if secrets and change.id in secrets:
        after = _marked_secret(after, secrets[change.id])
    return {
        "kind": change.kind,
        "name": str(change.key),
        "address": change.id,
        "action": change.action,
        "before": _object(change.before, kind, reads),
        "after": after,
        "fields": [fc.field for fc in change.changedFields],
        "reason": change.reason,
    }


def plan_values(plan: Plan) -> dict[str, Any]:
    """What every rule sees besides its change or changes."""
    return {
        "workspace": plan.workspace,
        "environment": plan.environment,
        "organization": {"id": plan.organizationId, "name": plan.organizationName},
        "plan": {"summary": plan.summary.model_dump()},
    }
