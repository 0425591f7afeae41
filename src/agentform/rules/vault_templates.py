"""Vault template rules (docs/service/contract.md#vault-templates), written once: the
service enforces them on every create and update, the provisioner checks them offline
(`validate`), with the same words, so a file that validates is a template the service
accepts.

The field types and limits are pydantic types both halves' models use; the
rules between fields and steps are `template_problems`, which reports every
problem at once, each with the path of the value at fault.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Annotated, Literal, Protocol

from pydantic import Field, StringConstraints

from agentform.core.problems import Problem, did_you_mean
from agentform.rules.values import NAME_SCHEMA, PlainName

TemplateKind = Literal["login", "api_key", "card", "custom"]
FieldType = Literal[
    "username",
    "email",
    "url",
    "phone",
    "text",
    "password",
    "hidden",
    "totp_seed",
    "api_key",
    "card_number",
    "card_expiry",
    "card_cvv",
    "cardholder_name",
]

MIN_FIELDS = 1  # a template has at least one field
MAX_STEPS = 20
STEP_KEY_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"

Name = Annotated[str, StringConstraints(min_length=1, max_length=200), PlainName, NAME_SCHEMA]
Description = Annotated[str, StringConstraints(max_length=4000)]
# A label gives the field's key: it needs a letter or digit (the pattern says so).
Label = Annotated[
    str,
    StringConstraints(min_length=1, max_length=200),
    Field(json_schema_extra={"pattern": "[A-Za-z0-9]"}),
]
FieldKey = Annotated[str, StringConstraints(max_length=200)]  # a key derived from a label
Hint = Annotated[str, StringConstraints(max_length=500)]
StepKey = Annotated[str, StringConstraints(max_length=64, pattern=STEP_KEY_PATTERN)]
Title = Annotated[str, StringConstraints(min_length=1, max_length=200)]
Instructions = Annotated[str, StringConstraints(max_length=4000)]

_NON_ALNUM = re.compile(r"[^A-Za-z0-9]+")


def field_key(label: str) -> str:
    """The key the service derives from a label, in UPPER_SNAKE: "API key" -> "API_KEY"."""
    return _NON_ALNUM.sub("_", label).strip("_").upper()


class StepLike(Protocol):
    @property
    def key(self) -> str: ...

    @property
    def instructions(self) -> object: ...  # a str, None, or (provisioner) a sensitive value

    @property
    def fieldKeys(self) -> Sequence[str]: ...


def template_problems(labels: Sequence[str] | None, steps: Sequence[StepLike]) -> list[Problem]:
    """Every problem of a template's fields and steps. `labels` None: the fields
    are not known (a provisioner file that manages steps only), so the steps'
    field references are not checked."""
    problems: list[Problem] = []
    keys: dict[str, int] = {}
    for i, label in enumerate(labels or ()):
        key = field_key(label)
        if not key:
            problems.append(Problem(f"fields.{i}.label", "must contain a letter or digit"))
        elif key in keys:
            problems.append(
                Problem(f"fields.{i}.label", f"gives key {key}, the same as fields.{keys[key]}")
            )
        else:
            keys[key] = i
    step_keys: dict[str, int] = {}
    used_by: dict[str, int] = {}
    for i, step in enumerate(steps):
        if step.key in step_keys:
            problems.append(
                Problem(
                    f"steps.{i}.key",
                    f"'{step.key}' is already used by steps.{step_keys[step.key]}",
                )
            )
        else:
            step_keys[step.key] = i
        if not step.fieldKeys and not step.instructions:
            problems.append(
                Problem(f"steps.{i}.fieldKeys", "may be empty only when instructions are set")
            )
        for j, key in enumerate(step.fieldKeys):
            at = f"steps.{i}.fieldKeys.{j}"
            if labels is not None and key not in keys:
                problems.append(
                    Problem(at, f"'{key}' is not a field of the template{_hint(key, keys)}")
                )
            elif key in used_by:
                problems.append(Problem(at, f"'{key}' is already in steps.{used_by[key]}"))
            else:
                used_by[key] = i
    return problems


def _hint(key: str, keys: dict[str, int]) -> str:
    return did_you_mean(key, keys) or (f" (fields: {', '.join(keys)})" if keys else "")
