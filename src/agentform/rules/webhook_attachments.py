"""Webhook attachment rules (docs/service/contract.md#attachments), written once for
the service and the provisioner: the attachment settings model (event rules, field
filters, metadata filter, unwrapResult) with what its filters mean, and the routing
decision that says which rule let a notification through or held it back.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictStr,
    StringConstraints,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from agentform.core.problems import rule_error
from agentform.rules.values import BoundedJson
from agentform.rules.webhook_events import (
    ALL_EVENTS,
    ATTACHABLE_EVENTS,
    COMPLETED_EVENT,
    event_rule_problem,
)

# -- pydantic types of event names and filters --------------------------------


def _check_event_rule(name: str) -> str:
    problem = event_rule_problem(name)
    if problem:
        raise rule_error(problem)
    return name


def _check_filter_event(name: str) -> str:
    if name == ALL_EVENTS:
        raise rule_error("a field filter names one event, not '*'")
    return _check_event_rule(name)


EventRule = Annotated[
    StrictStr,
    AfterValidator(_check_event_rule),
    WithJsonSchema({"type": "string", "enum": [ALL_EVENTS, *ATTACHABLE_EVENTS]}),
]
FilterEvent = Annotated[
    StrictStr,
    AfterValidator(_check_filter_event),
    WithJsonSchema({"type": "string", "enum": list(ATTACHABLE_EVENTS)}),
]
FilterPath = Annotated[
    StrictStr,
    StringConstraints(max_length=200, pattern=r"^[^.\s]+(\.[^.\s]+)*$"),
]
FilterOp = Literal["eq", "ne", "in", "exists"]


# -- attachment settings and what they mean ------------------------------------


_MISSING = object()
SHOWN_LENGTH = 80


def _shown(text: str) -> str:
    """A value as a routing reason shows it: at most SHOWN_LENGTH characters."""
    return text if len(text) <= SHOWN_LENGTH else text[: SHOWN_LENGTH - 1] + "…"


@dataclass(frozen=True)
class Routing:
    """Whether a notification goes to one attachment, and which rule decided it."""

    wanted: bool
    rule: str
    """The setting that decided: `eventRules`, `metadataFilter.team`, `fieldFilters[0]`."""
    reason: str
    """The decision in plain words."""


def payload_value(payload: Any, path: str) -> Any:
    """The value at a dotted path inside a payload, or `_MISSING`.

    A segment of digits indexes a list (`steps.0.name`).
    """
    current = payload
    for segment in path.split("."):
        if isinstance(current, Mapping) and segment in current:
            current = current[segment]
        elif isinstance(current, list) and segment.isdigit() and int(segment) < len(current):
            current = current[int(segment)]
        else:
            return _MISSING
    return current


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: `true` is not `1`, and `1` is `1.0`."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True) or (
        type(a) in (int, float) and type(b) in (int, float) and a == b
    )


class FieldFilter(BaseModel):
    """`{event, path, op, value?}`: for notifications of `event`, the value at
    `path` inside `info.payload` must satisfy `op`."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    event: FilterEvent = Field(description="The event this filter applies to")
    path: FilterPath = Field(description="A dotted path inside info.payload", examples=["outcome"])
    op: FilterOp = Field(description="eq, ne, in (value is a list) or exists")
    value: Annotated[Any, BoundedJson] = Field(
        None,
        description="eq/ne: the value; in: a non-empty list of values; exists: not given",
        exclude_if=lambda value: value is None,
    )

    @model_validator(mode="after")
    def _value_fits_op(self) -> FieldFilter:
        given = "value" in self.model_fields_set
        if self.op == "exists" and given:
            raise rule_error("op 'exists' takes no value")
        if self.op != "exists" and (not given or self.value is None):
            # null is refused so that an absent value and a null one read back the same.
            raise rule_error(f"op '{self.op}' needs a value (not null)")
        if self.op == "in" and (not isinstance(self.value, list) or not self.value):
            raise rule_error("op 'in' needs a non-empty list as its value")
        return self

    def matches(self, payload: Any) -> bool:
        found = payload_value(payload, self.path)
        if self.op == "exists":
            return found is not _MISSING
        if self.op == "eq":
            return found is not _MISSING and json_equal(found, self.value)
        if self.op == "ne":  # the negation of eq: a missing field is "not equal"
            return found is _MISSING or not json_equal(found, self.value)
        return found is not _MISSING and any(json_equal(found, v) for v in self.value)

    def text(self) -> str:
        """The filter in words: `outcome ne "success"`."""
        if self.op == "exists":
            return f"{self.path} exists"
        return f"{self.path} {self.op} {_shown(json.dumps(self.value))}"

    def seen(self, payload: Any) -> str:
        """What the payload held at the path, in words."""
        found = payload_value(payload, self.path)
        if found is _MISSING:
            return f"{self.path} is absent"
        return f"{self.path} is {_shown(json.dumps(found))}"

    def canonical(self) -> str:
        """A stable text of this filter, for comparing lists of filters as sets."""
        return json.dumps(self.model_dump(mode="json"), sort_keys=True)


class AttachmentSettings(BaseModel):
    """What an attachment of an integration to an agent asks for
    (docs/service/contract.md#attachments).

    The body of `PUT /agents/{agentId}/webhooks/{integrationId}` and the part of
    an attachment a provisioner manages.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    eventRules: tuple[EventRule, ...] = Field(
        min_length=1,
        description='event names (docs/service/contract.md#events-and-payloads), or ["*"] for all',
    )
    fieldFilters: tuple[FieldFilter, ...] = Field(
        (),
        description="Rules on payload fields: a notification of an event is sent only if "
        "every filter naming that event matches",
    )
    metadataFilter: dict[StrictStr, StrictStr] = Field(
        default_factory=dict,
        description="Sent only when every pair is in the execution's metadata, equal",
    )
    unwrapResult: StrictBool = Field(
        False, description="For EXECUTION_COMPLETED, send payload.result alone"
    )

    @field_validator("eventRules")
    @classmethod
    def _a_set_or_all(cls, rules: tuple[str, ...]) -> tuple[str, ...]:
        if ALL_EVENTS in rules and len(rules) > 1:
            raise rule_error("'*' stands alone: it already means every event")
        seen: set[str] = set()
        for rule in rules:
            if rule in seen:
                raise rule_error(f"'{rule}' is listed twice (eventRules is a set)")
            seen.add(rule)
        return rules

    @field_validator("fieldFilters")
    @classmethod
    def _filters_name_ruled_events(
        cls, filters: tuple[FieldFilter, ...], info: ValidationInfo
    ) -> tuple[FieldFilter, ...]:
        rules = info.data.get("eventRules")
        if rules is None or ALL_EVENTS in rules:
            return filters
        for i, f in enumerate(filters):
            if f.event not in rules:
                raise rule_error(
                    f"fieldFilters[{i}] is on {f.event}, which eventRules does not include"
                )
        return filters

    def wants(self, event: str, payload: Any, metadata: Mapping[str, str] | None) -> bool:
        """Whether a notification of `event` with this payload and execution
        metadata is sent to this attachment (its agent already matched)."""
        return self.decide(event, payload, metadata).wanted

    def decide(self, event: str, payload: Any, metadata: Mapping[str, str] | None) -> Routing:
        """Whether a notification of `event` is sent to this attachment, and the rule
        that decided it: the first rule that refuses it, else the rules that let it
        through. Rules are tried in the order eventRules, metadataFilter, fieldFilters."""
        if event not in self.eventRules and not (
            ALL_EVENTS in self.eventRules and event in ATTACHABLE_EVENTS
        ):
            listed = ", ".join(self.eventRules)
            return Routing(False, "eventRules", f"the event rules ({listed}) do not list {event}")
        metadata = metadata or {}
        for key, wanted in self.metadataFilter.items():
            found = metadata.get(key)
            if found != wanted:
                seen = (
                    f"the execution's metadata has no '{_shown(key)}'"
                    if found is None
                    else f"the execution's was '{_shown(found)}'"
                )
                return Routing(
                    False,
                    f"metadataFilter.{key}",
                    f"metadataFilter.{key} wanted '{_shown(wanted)}', {seen}",
                )
        passed = []
        for index, rule in enumerate(self.fieldFilters):
            if rule.event != event:
                continue
            name = f"fieldFilters[{index}]"
            if not rule.matches(payload):
                return Routing(
                    False, name, f"{name} `{rule.text()}` was false ({rule.seen(payload)})"
                )
            passed.append(name)
        why = (
            f"the event rules list {event}"
            if event in self.eventRules
            else "the event rules are '*'"
        )
        if self.metadataFilter:
            why += ", the metadata filter matched"
        if passed:
            why += f", {', '.join(passed)} matched"
        return Routing(True, "eventRules", why)

    def unwraps(self, event: str) -> bool:
        return self.unwrapResult and event == COMPLETED_EVENT
