"""Vault template rules (API.md §7): field keys derived from labels, step checks."""

from __future__ import annotations

import re
from collections.abc import Sequence

from .errors import ServiceError
from .models import TemplateField, TemplateFieldIn, TemplateStep

_NON_ALNUM = re.compile(r"[^A-Za-z0-9]+")


def field_key(label: str) -> str:
    """The label in UPPER_SNAKE: "API key" -> "API_KEY"."""
    return _NON_ALNUM.sub("_", label).strip("_").upper()


def _fail(parameter: str, detail: str) -> ServiceError:
    return ServiceError(400, f"{parameter}: {detail}", [(parameter, detail)])


def build_fields(fields: Sequence[TemplateFieldIn]) -> list[TemplateField]:
    out: list[TemplateField] = []
    seen: dict[str, int] = {}
    for i, f in enumerate(fields):
        key = field_key(f.label)
        if not key:
            raise _fail(f"fields.{i}.label", "must contain a letter or digit")
        if key in seen:
            raise _fail(
                f"fields.{i}.label",
                f"gives key {key}, the same as fields.{seen[key]}",
            )
        seen[key] = i
        out.append(
            TemplateField(type=f.type, label=f.label, required=f.required, hint=f.hint, key=key)
        )
    return out


def check_steps(steps: Sequence[TemplateStep], fields: Sequence[TemplateField]) -> None:
    keys = {f.key for f in fields}
    step_keys: dict[str, int] = {}
    used_by: dict[str, int] = {}
    for i, step in enumerate(steps):
        if step.key in step_keys:
            raise _fail(
                f"steps.{i}.key", f"'{step.key}' is already used by steps.{step_keys[step.key]}"
            )
        step_keys[step.key] = i
        if not step.fieldKeys and not step.instructions:
            raise _fail(f"steps.{i}.fieldKeys", "may be empty only when instructions are set")
        for key in step.fieldKeys:
            if key not in keys:
                raise _fail(f"steps.{i}.fieldKeys", f"'{key}' is not a field of the template")
            if key in used_by:
                raise _fail(f"steps.{i}.fieldKeys", f"'{key}' is already in steps.{used_by[key]}")
            used_by[key] = i
