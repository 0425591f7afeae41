"""The `vaultTemplates` kind (docs/service/contract.md#vault-templates): ordered fields
and steps; presets untouched.

The field types, limits and the rules between fields and steps are the shared
rules of `rules/vault_templates.py`, the ones the service enforces.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, StrictBool

from agentform.core.diagnostics import Diagnostics
from agentform.core.sensitive import AllowSensitive, Sensitive
from agentform.kinds.base import FieldDocs, Kind
from agentform.kinds.context import LiveRead, PlanContext
from agentform.kinds.keys import Key
from agentform.kinds.model import ApiCall, Declared, DesiredModel, LiveObject, State
from agentform.kinds.values import plain
from agentform.rules import vault_templates as rules
from agentform.rules.vault_templates import FieldType, TemplateKind


class TemplateField(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    type: FieldType
    label: rules.Label
    required: StrictBool  # `yes` is a word, not true
    hint: Annotated[str | Sensitive, AllowSensitive(rules.Hint)] | None = None


class TemplateStep(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    key: rules.StepKey
    title: Annotated[str | Sensitive, AllowSensitive(rules.Title)]
    instructions: Annotated[str | Sensitive, AllowSensitive(rules.Instructions)] | None = None
    fieldKeys: tuple[rules.FieldKey, ...] = ()


class VaultTemplateDesired(DesiredModel):
    name: rules.Name
    kind: TemplateKind | None = None
    description: Annotated[str | Sensitive, AllowSensitive(rules.Description)] | None = None
    fields: list[TemplateField] | None = Field(None, min_length=rules.MIN_FIELDS)
    steps: list[TemplateStep] | None = Field(None, max_length=rules.MAX_STEPS)


class VaultTemplateState(State):
    name: str
    kind: str | None = None
    description: Annotated[str | Sensitive, AllowSensitive(rules.Description)] | None = None
    fields: tuple[TemplateField, ...] = ()
    steps: tuple[TemplateStep, ...] = ()


class VaultTemplates(Kind):
    name = "vaultTemplates"
    label = "vault template"
    collection = "/vault/templates"
    desired_model = VaultTemplateDesired
    summary = "Vault templates (docs/service/contract.md#vault-templates)."
    field_docs: ClassVar[FieldDocs] = {
        "VaultTemplateDesired.name": (
            "The name: the template's identity (unique in the organization).",
            ["Shop login"],
        ),
        "VaultTemplateDesired.kind": ("What the template holds; needed to create it.", ["login"]),
        "VaultTemplateDesired.description": (
            "Free text (at most 4,000 characters); null or empty clears it.",
            ["Sign-in for the shop's back office"],
        ),
        "VaultTemplateDesired.fields": (
            "The ordered fields; needed to create the template. Omit to leave them unmanaged.",
            [[{"type": "username", "label": "Username", "required": True}]],
        ),
        "VaultTemplateDesired.steps": (
            "The ordered steps (at most 20), each naming the keys of the fields it fills.",
            [[{"key": "sign-in", "title": "Sign in", "fieldKeys": ["USERNAME", "PASSWORD"]}]],
        ),
        "TemplateField.type": ("What the field holds.", ["password"]),
        "TemplateField.label": (
            "The label (1 to 200 characters); its UPPER_SNAKE form is the field's key.",
            ["API key"],
        ),
        "TemplateField.required": ("Whether a vault item must fill the field.", [True]),
        "TemplateField.hint": ("Help shown with the field (at most 500 characters).", []),
        "TemplateStep.key": ("A lower-case slug unique in the template.", ["sign-in"]),
        "TemplateStep.title": ("The step's title (1 to 200 characters).", ["Sign in"]),
        "TemplateStep.instructions": ("What to do in this step (at most 4,000 characters).", []),
        "TemplateStep.fieldKeys": (
            "Keys of the fields filled in this step (a field is in at most one step); may be "
            "empty only when there are instructions.",
            [["USERNAME", "PASSWORD"]],
        ),
    }

    def check(self, declared: list[Declared], diagnostics: Diagnostics) -> None:
        """The service's template rules, offline: every problem, at the value at fault."""
        for item in declared:
            model = item.model
            assert isinstance(model, VaultTemplateDesired)
            labels = None if model.fields is None else [f.label for f in model.fields]
            for problem in rules.template_problems(labels, model.steps or []):
                diagnostics.error(
                    f"vault template {model.name}: {problem.parameter}: {problem.detail}",
                    item.at(*(int(p) if p.isdigit() else p for p in problem.parameter.split("."))),
                )

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
        return {name: plain(getattr(state, name)) for name in sorted(names)}

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
