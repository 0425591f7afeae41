"""The `vaultTemplates` kind (API.md §7): ordered fields and steps; presets untouched."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..config.diagnostics import Diagnostics
from ..contract import FieldType, TemplateKind
from .base import ApiCall, Declared, DesiredModel, Kind, LiveObject, State
from .context import LiveRead, PlanContext
from .keys import Key


class TemplateField(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    type: FieldType
    label: str = Field(min_length=1, max_length=200)
    required: bool
    hint: str | None = Field(None, max_length=500)


class TemplateStep(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    key: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$", max_length=64)
    title: str = Field(min_length=1, max_length=200)
    instructions: str | None = Field(None, max_length=4000)
    fieldKeys: tuple[str, ...] = ()


class VaultTemplateDesired(DesiredModel):
    name: str = Field(min_length=1, max_length=200)
    kind: TemplateKind | None = None
    description: str | None = None
    fields: list[TemplateField] | None = Field(None, min_length=1)
    steps: list[TemplateStep] | None = Field(None, max_length=20)


class VaultTemplateState(State):
    name: str
    kind: str | None = None
    description: str | None = None
    fields: tuple[TemplateField, ...] = ()
    steps: tuple[TemplateStep, ...] = ()


def field_key(label: str) -> str:
    """The key the service derives from a label: "API key" -> "API_KEY"."""
    return re.sub(r"[^A-Za-z0-9]+", "_", label).strip("_").upper()


class VaultTemplates(Kind):
    name = "vaultTemplates"
    label = "vault template"
    collection = "/vault/templates"
    desired_model = VaultTemplateDesired

    def check(self, declared: list[Declared], diagnostics: Diagnostics) -> None:
        for item in declared:
            model = item.model
            assert isinstance(model, VaultTemplateDesired)
            keys: dict[str, str] = {}
            for f in model.fields or []:
                key = field_key(f.label)
                if not key:
                    diagnostics.error(
                        f"vault template {model.name}: label '{f.label}' gives an empty key",
                        item.position,
                    )
                elif key in keys:
                    diagnostics.error(
                        f"vault template {model.name}: labels '{keys[key]}' and "
                        f"'{f.label}' both give key {key}",
                        item.position,
                    )
                keys[key] = f.label
            if model.fields is None:
                continue
            used: dict[str, str] = {}
            for step in model.steps or []:
                if not step.fieldKeys and not step.instructions:
                    diagnostics.error(
                        f"vault template {model.name}: step {step.key} needs "
                        "fieldKeys or instructions",
                        item.position,
                    )
                for key in step.fieldKeys:
                    if key not in keys:
                        hint = f" (fields: {', '.join(keys)})" if keys else ""
                        diagnostics.error(
                            f"vault template {model.name}: step {step.key} names "
                            f"field {key}, which does not exist{hint}",
                            item.position,
                        )
                    elif key in used:
                        diagnostics.error(
                            f"vault template {model.name}: field {key} is in "
                            f"steps {used[key]} and {step.key}",
                            item.position,
                        )
                    used[key] = step.key

    async def read_live(self, read: LiveRead) -> list[LiveObject]:
        out = []
        for item in await read.api.list_all(self.collection):
            state = VaultTemplateState(
                name=item["name"],
                kind=item["kind"],
                description=item.get("description"),
                fields=tuple(
                    TemplateField.model_validate({k: v for k, v in f.items() if k != "key"})
                    for f in item["fields"]
                ),
                steps=tuple(TemplateStep.model_validate(s) for s in item["steps"]),
            )
            out.append(
                LiveObject(
                    Key(item["name"]),
                    item["id"],
                    state,
                    item,
                    preset=item.get("origin") == "generated",
                )
            )
        return out

    def desired_state(
        self, declared: Declared, ctx: PlanContext, live: LiveObject | None
    ) -> State | None:
        model = declared.model
        managed = model.model_fields_set - {"ensure"}
        return VaultTemplateState(
            **{
                k: getattr(model, k)
                for k in managed
                if getattr(model, k) is not None or k == "description"
            }
        )

    def required_to_create(self) -> tuple[str, ...]:
        return ("kind", "fields")

    def _body(self, state: State, names: set[str]) -> dict[str, Any]:
        dumped = state.model_dump(include=names, mode="json")
        for name in ("fields", "steps"):
            if name in dumped:
                dumped[name] = [{k: v for k, v in i.items() if v is not None} for i in dumped[name]]
        return dumped

    def create_calls(self, desired: State) -> list[ApiCall]:
        return [
            ApiCall(
                method="POST",
                path=self.collection,
                body=self._body(desired, desired.model_fields_set),
                creates=True,
            )
        ]

    def update_calls(self, live: LiveObject, desired: State, changed: set[str]) -> list[ApiCall]:
        body = self._body(desired, changed)
        return [ApiCall(method="PATCH", path=f"{self.collection}/{live.id}", body=body)]
