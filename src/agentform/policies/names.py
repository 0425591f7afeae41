"""The names a rule may select, checked when its file is loaded: `change.afterr` or
`change.after.urll` is an error at its position with a "did you mean", not a rule
that is silently never violated.

An object's fields (`change.before.X`, `change.after.X`) are those of the kinds
the rule matches (every kind when it names none): the fields a kind's YAML writes,
which are the fields of a change's `before` and `after`. A map of sensitive values
(a webhook's headers) given whole to a function other than a test of one is an
error too: its values stand as tokens (policies/values.py), so the rule could never
read one.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentform.core.problems import did_you_mean
from agentform.kinds.base import Kind
from agentform.policies.selections import (
    MACROS,
    Call,
    Selection,
    calls,
    computed_keys,
    selections,
    values_used,
)
from agentform.policies.types import OBJECTS, Sort

CHANGE = ("kind", "name", "address", "action", "before", "after", "fields", "reason")
ORGANIZATION = ("id", "name")
TAKE_SENSITIVE = frozenset({"isSecret", "isSensitive", "isSet", "size", "has", *MACROS})
"""What a rule may call on a map of sensitive values (a webhook's headers): its names
are read, a value is only tested."""


def _kinds(kinds: Iterable[str]) -> list[Kind]:
    """The kinds a rule matches (every kind when it names none)."""
    return [Kind.registry[k] for k in kinds if k in Kind.registry] or list(Kind.registry.values())


def kind_fields(kinds: Iterable[str]) -> set[str]:
    """The fields of the objects of `kinds` (every kind when empty)."""
    found: set[str] = set()
    for kind in _kinds(kinds):
        found |= set(kind.desired_model.model_fields) - {"ensure", *kind.children}
    return found


def _plan_names(scope: str) -> tuple[str, ...]:
    return ("summary", "changes") if scope == "plan" else ("summary",)


def unknown_names(
    source: str, scope: str, kinds: Iterable[str], shown: bool = False
) -> list[tuple[str, int]]:
    """Each name `source` selects that the values a rule sees do not have, and each
    sensitive value it reads (`shown`: a message's, which may join one with `+`,
    shown as `(sensitive)`), with its offset in `source`."""
    fields = sorted(kind_fields(kinds))
    which = ", ".join(kinds) or "any kind"
    problems = []
    for sel in selections(source):
        found = _problem(sel.names, scope, fields, which, sel.element)
        if found is not None:
            problems.append((found[0], sel.offsets[min(found[1], len(sel.offsets) - 1)]))
    sensitive = {f for k in _kinds(kinds) for f in k.sensitive_fields}
    problems += [(m, c.offset) for c in calls(source) if (m := _sensitive_use(c, sensitive))]
    for value, at in values_used(source, shown):
        held, name = value.path[:2]
        if held in OBJECTS and name in sensitive:
            problems.append((_VALUE_READ.format(whole=f"change.{held}.{name}"), at))
    for value, at in computed_keys(source):
        problems.append((_COMPUTED_KEY.format(whole=".".join((value.sort, *value.path))), at))
    return sorted(problems, key=lambda p: p[1])


_VALUE_READ = (
    "a value of {whole} is sensitive and never given to a rule (a function, a method "
    "or an operator such as ==, in or + would read a token, not the value): test one "
    "only with isSecret, isSensitive or isSet; its names are read ('X-Team' in {whole})"
)


_COMPUTED_KEY = (
    "{whole}[...] by a key the rule computes: a rule indexes change, plan, organization "
    "and a change's before and after only by a field's name in quotes "
    "(change['after']['url'] is change.after.url), since a computed key may reach a "
    "sensitive value (a webhook header's) that loading cannot check"
)


def _sensitive_use(call: Call, sensitive: set[str]) -> str | None:
    """Why `call` may not take a map of sensitive values: each value stands as a token
    (policies/values.py), so anything but a test of one is never true, or an error.
    (One of its values is never given to any: `values_used`.)"""
    if call.name in TAKE_SENSITIVE:
        return None
    for value in call.arguments:
        if not isinstance(value, Sort) or value.sort != "change" or len(value.path) != 2:
            continue
        held, name = value.path
        if held in OBJECTS and name in sensitive:
            whole = f"change.{held}.{name}"
            return (
                f"{call.name}() of {whole}: its values are "
                f"sensitive and never given to a rule; a rule reads its names ('X-Team' in "
                f"{whole}, .exists(h, ...)) and tests a value only with isSecret, "
                "isSensitive or isSet"
            )
    return None


def _problem(
    names: tuple[str, ...], scope: str, fields: list[str], which: str, element: str | None
) -> tuple[str, int] | None:
    """What is wrong with a selection, and the index of the name at fault. `element`:
    names[0] is a comprehension's variable over such items (a `change`, a `name`),
    whose fields are those of the value it stands for."""
    root, value = names[0], element or names[0]
    if value == "change" and element is None and scope == "plan":
        return "a plan rule sees `plan.changes`, not `change`", 0
    if len(names) < 2:
        return None
    second = names[1]
    if value in ("workspace", "environment", "name"):
        return f"{root} is a name (a string): it has no field {second}", 1
    known = {"change": CHANGE, "plan": _plan_names(scope), "organization": ORGANIZATION}[value]
    if second not in known:
        return f"{root} has no field {second}{did_you_mean(second, known)}", 1
    if len(names) < 3:
        return None
    third = names[2]
    if value == "plan" and second == "summary":
        from agentform.engine.model import Summary  # the plan's model: only asked here

        if third not in Summary.model_fields:
            return (
                f"plan.summary has no count {third}{did_you_mean(third, Summary.model_fields)}",
                2,
            )
    if value == "change" and second in OBJECTS and third not in fields:
        return f"the objects of {which} have no field {third}{did_you_mean(third, fields)}", 2
    return None


def _object_read(selection: Selection) -> str | None:
    """The object field a selection of a change reads (`change.after.url`, or `d.after.url`
    where `d` stands for the change); "" for a whole object; None when it reads none."""
    if (selection.element or selection.names[0]) != "change" or len(selection.names) < 2:
        return None
    if selection.names[1] not in OBJECTS:
        return None
    return selection.names[2] if len(selection.names) > 2 else ""


def fields_read(source: str) -> tuple[str, ...]:
    """The object fields `source` reads (`change.after.url` reads url), in order."""
    found = [f for s in selections(source) if (f := _object_read(s))]
    return tuple(dict.fromkeys(found))


def object_reads(sources: Iterable[str]) -> frozenset[str] | None:
    """The object fields the expressions read; None when one reads a whole object
    (`change.after[...]`, `change.after.exists(...)`): a change's values are then
    given whole, else only these fields (converting every value costs more than
    most rules)."""
    found: set[str] = set()
    for source in sources:
        for s in selections(source):
            field = _object_read(s)
            if field == "":
                return None
            if field is not None:
                found.add(field)
    return frozenset(found)
