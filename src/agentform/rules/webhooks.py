"""Webhook rules (docs/service/contract.md#webhook-delivery, #webhook-integrations),
written once for the service and the provisioner.

What is here: the event names (docs/service/contract.md#events-and-payloads) and which
of them an attachment may name; the integration rules (name, URL, payload version,
custom headers); the attachment settings model with the meaning of its filters; and the
header digest a read answers instead of a header value.

Every check raises (inside pydantic) or returns a message that names the
offending field but never a header value: header values are secrets.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

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
from pydantic_core import PydanticCustomError

from agentform.core.problems import did_you_mean, rule_error
from agentform.rules.signatures import SIGNATURE_HEADER
from agentform.rules.values import NAME_SCHEMA, BoundedJson, PlainName
from agentform.rules.webhook_targets import target_problem

# -- events (docs/service/contract.md#events-and-payloads) ----------------------------

EXECUTION_EVENTS: tuple[str, ...] = (
    "EXECUTION_STARTED",
    "EXECUTION_COMPLETED",
    "EXECUTION_FAILED",
    "EXECUTION_CANCELLED",
    "EXECUTION_PAUSED",
    "EXECUTION_RESUMED",
    "EXECUTION_AWAITING_CONFIRMATION",
    "EXECUTION_ACTION_STARTED",
    "EXECUTION_ACTION_COMPLETED",
    "EXECUTION_ACTION_FAILED",
    "EXECUTION_STEP_STARTED",
    "EXECUTION_STEP_PROCESSED",
    "EXECUTION_MESSAGE_ADDED",
    "EXECUTION_REASONING_ADDED",
    "EXECUTION_FILE_ADDED",
    "EXECUTION_PLAYWRIGHT_SCRIPT_GENERATED",
    "EXECUTION_TRANSITIONED",
    "EXECUTION_WORKFLOW_UPDATED",
    "USER_MESSAGE_RECEIVED",
)
"""The events an execution emits, in the contract's order
(docs/service/contract.md#events-and-payloads)."""

BATCH_EVENTS: tuple[str, ...] = ("BATCH_STARTED", "BATCH_COMPLETED")
TEST_EVENT = "EXECUTION_TEST"
"""Sent only by `POST /webhook-integrations/{id}/test`; never attached."""

EVENT_NAMES: tuple[str, ...] = (*EXECUTION_EVENTS, *BATCH_EVENTS, TEST_EVENT)
ATTACHABLE_EVENTS: tuple[str, ...] = (*EXECUTION_EVENTS, *BATCH_EVENTS)
ALL_EVENTS = "*"
"""`eventRules: ["*"]`: every attachable event."""

COMPLETED_EVENT = "EXECUTION_COMPLETED"
"""The one event `unwrapResult` changes: its body is `payload.result` alone."""


@dataclass(frozen=True)
class PayloadFields:
    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()


EVENT_PAYLOAD_FIELDS: Mapping[str, PayloadFields] = {
    "EXECUTION_STARTED": PayloadFields(),
    "EXECUTION_COMPLETED": PayloadFields(("result", "reasoning", "outcome")),
    "EXECUTION_FAILED": PayloadFields(("reason",)),
    "EXECUTION_CANCELLED": PayloadFields(("reason", "cancelled_by")),
    "EXECUTION_PAUSED": PayloadFields(("reason", "paused_by")),
    "EXECUTION_RESUMED": PayloadFields(("reason",)),
    "EXECUTION_AWAITING_CONFIRMATION": PayloadFields(("reason",)),
    "EXECUTION_ACTION_STARTED": PayloadFields(
        ("action_id", "action_name", "arguments", "step_number")
    ),
    "EXECUTION_ACTION_COMPLETED": PayloadFields(
        ("action_id", "action_name", "output", "step_number"), ("duration",)
    ),
    "EXECUTION_ACTION_FAILED": PayloadFields(
        ("action_id", "action_name", "failure", "step_number"), ("duration", "os_error")
    ),
    "EXECUTION_STEP_STARTED": PayloadFields(("step",)),
    "EXECUTION_STEP_PROCESSED": PayloadFields(("step",)),
    "EXECUTION_MESSAGE_ADDED": PayloadFields(("message",)),
    "EXECUTION_REASONING_ADDED": PayloadFields(("reasoning",)),
    "EXECUTION_FILE_ADDED": PayloadFields(
        ("file_id", "file_name", "mime_type", "file_size", "source", "presigned_url")
    ),
    "EXECUTION_PLAYWRIGHT_SCRIPT_GENERATED": PayloadFields(
        ("node_id", "node_name", "script", "context", "generated_at")
    ),
    "EXECUTION_TRANSITIONED": PayloadFields(
        ("to_node",), ("from_node_duration", "transition_type")
    ),
    "EXECUTION_WORKFLOW_UPDATED": PayloadFields(("workflow_update",)),
    "USER_MESSAGE_RECEIVED": PayloadFields(
        ("user_id", "message", "execution_was", "injected_into")
    ),
    # The contract adds item_count to BATCH_COMPLETED
    # (docs/service/contract.md#events-and-payloads).
    "BATCH_STARTED": PayloadFields(("batch_id", "batch_name", "item_count")),
    "BATCH_COMPLETED": PayloadFields(
        ("batch_id", "batch_name", "item_count", "triggered_count", "cancelled_count")
    ),
    TEST_EVENT: PayloadFields(("message",)),
}
"""The payload fields of each event (docs/service/contract.md#events-and-payloads):
exactly these, no others."""


def event_rule_problem(name: str) -> str | None:
    """Why `name` cannot be an entry of `eventRules`, or None."""
    if name == ALL_EVENTS or name in ATTACHABLE_EVENTS:
        return None
    if name == TEST_EVENT:
        return f"{TEST_EVENT} is sent only by the integration's test and cannot be attached"
    return f"unknown event '{name}'{did_you_mean(name.upper(), ATTACHABLE_EVENTS)}"


# -- integrations (docs/service/contract.md#webhook-integrations) ---------------------

MAX_HEADERS = 20
MAX_HEADER_VALUE = 8192  # characters (ASCII: bytes) of one custom header's value
MAX_URL_LENGTH = 2048
SERVICE_HEADERS = frozenset({"content-type", "content-length", "host", SIGNATURE_HEADER.lower()})
"""Header names the service sets itself on a delivery (case-insensitive)."""
HOP_BY_HOP_HEADERS = frozenset(
    {"transfer-encoding", "connection", "keep-alive", "te", "trailer", "upgrade", "expect"}
)
"""Headers that change how a request is framed or what a proxy forwards
(RFC 9110 §7.6.1, RFC 9112 §6): with the service's own Content-Length, a custom
`Transfer-Encoding: chunked` is the request-smuggling shape, and `Connection:
X-Service-Signature` would let a proxy drop the signature. `Proxy-*` too."""
REFUSED_HEADERS = SERVICE_HEADERS | HOP_BY_HOP_HEADERS
"""Header names a custom header may not have (case-insensitive), besides `Proxy-*`."""

PAYLOAD_VERSION = "v2"
PAYLOAD_VERSION_MESSAGE = "only the V2 payload format is accepted (payloadVersion 'v2')"

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# What an HTTP/1.1 field value may be on the wire (RFC 9110 §5.5, as h11 checks it):
# visible ASCII, inner spaces and tabs, no line break, no leading or trailing blank.
_FIELD_VALUE = re.compile(r"(?:[\x21-\x7e]+(?:[ \t]+[\x21-\x7e]+)*)?")


def url_problem(url: str) -> str | None:
    """Why `url` cannot be an integration's URL, or None."""
    if len(url) > MAX_URL_LENGTH:
        return f"must be at most {MAX_URL_LENGTH} characters"
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        return "must not contain spaces or control characters"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError as exc:
        return f"is not a valid URL ({exc})"
    if parts.scheme.lower() not in ("http", "https"):
        return "must be an absolute http or https URL"
    if not parts.hostname:
        return "must be an absolute http or https URL with a host"
    if parts.username is not None or parts.password is not None:
        return "must not carry credentials; send them in a custom header instead"
    return None


def header_name_problem(name: str) -> str | None:
    """Why `name` cannot be a custom header's name, or None."""
    if not _TOKEN.fullmatch(name):
        return (
            f"'{name}' is not a valid header name "
            "(letters, digits and !#$%&'*+-.^_`|~ only, at least one)"
        )
    if name.lower() in SERVICE_HEADERS:
        return f"'{name}' is set by the service and cannot be a custom header"
    if name.lower() in HOP_BY_HOP_HEADERS or name.lower().startswith("proxy-"):
        return f"'{name}' is a hop-by-hop or framing header and cannot be a custom header"
    return None


def is_sendable_header_value(value: str) -> bool:
    """Whether `value` can go on the wire as a header value (it is never shown)."""
    return _FIELD_VALUE.fullmatch(value) is not None


def header_problems(headers: Mapping[str, str | None]) -> list[tuple[str, str]]:
    """Every problem of a custom header map, as (parameter, detail); values never shown.

    A value of None is not checked (a caller that cannot see it yet, like a
    provisioner before secrets are resolved).
    """
    problems: list[tuple[str, str]] = []
    if len(headers) > MAX_HEADERS:
        problems.append(("headers", f"at most {MAX_HEADERS} headers, got {len(headers)}"))
    seen: dict[str, str] = {}
    for name, value in headers.items():
        where = f"headers.{name}"
        problem = header_name_problem(name)
        if problem:
            problems.append((where, problem))
            continue
        if name.lower() in seen:
            problems.append((where, f"'{name}' repeats '{seen[name.lower()]}' (names ignore case)"))
        seen[name.lower()] = name
        if value is not None and len(value) > MAX_HEADER_VALUE:
            problems.append(
                (where, f"the value must be at most {MAX_HEADER_VALUE} characters (not shown)")
            )
        elif value is not None and not is_sendable_header_value(value):
            problems.append(
                (
                    where,
                    "the value must be printable ASCII, without line breaks "
                    "or leading or trailing blanks (the value is not shown)",
                )
            )
    return problems


def header_digest(integration_id: str, name: str, value: str) -> str:
    """`sha256:HEX` of `integrationId:NAME:VALUE`
    (docs/service/contract.md#webhook-integrations): what reads answer."""
    data = f"{integration_id}:{name}:{value}".encode()
    return "sha256:" + hashlib.sha256(data).hexdigest()


# -- pydantic types for both halves --------------------------------------------


def _fail(detail: str) -> PydanticCustomError:
    return rule_error(detail)


def _check_url(url: str) -> str:
    problem = url_problem(url) or target_problem(url)
    if problem:
        raise _fail(problem)
    return url


def _check_payload_version(version: str) -> str:
    if version != PAYLOAD_VERSION:
        raise _fail(PAYLOAD_VERSION_MESSAGE)
    return version


def _check_headers(headers: dict[str, str]) -> dict[str, str]:
    problems = header_problems(headers)
    if problems:
        # Each problem at its header (`headers.X-A`), or at the map itself.
        at = [(tuple(p.split(".", 1)[1:]), d) for p, d in problems]
        raise rule_error("; ".join(f"{p}: {d}" for p, d in problems), at)
    return headers


def _check_event_rule(name: str) -> str:
    problem = event_rule_problem(name)
    if problem:
        raise _fail(problem)
    return name


def _check_filter_event(name: str) -> str:
    if name == ALL_EVENTS:
        raise _fail("a field filter names one event, not '*'")
    return _check_event_rule(name)


IntegrationName = Annotated[
    StrictStr, StringConstraints(min_length=1, max_length=200), PlainName, NAME_SCHEMA
]
IntegrationUrl = Annotated[
    StrictStr,
    AfterValidator(_check_url),
    WithJsonSchema(
        {
            "type": "string",
            "format": "uri",
            "maxLength": MAX_URL_LENGTH,
            "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://[^/?#@\\s]+",
        }
    ),
]
PayloadVersion = Annotated[
    StrictStr,
    AfterValidator(_check_payload_version),
    WithJsonSchema({"type": "string", "enum": [PAYLOAD_VERSION]}),
]
HeaderMap = Annotated[
    dict[StrictStr, StrictStr],
    AfterValidator(_check_headers),
    WithJsonSchema(
        {
            "type": "object",
            "propertyNames": {"pattern": f"^{_TOKEN.pattern}$"},
            "additionalProperties": {
                "type": "string",
                "pattern": f"^{_FIELD_VALUE.pattern}$",
                "maxLength": MAX_HEADER_VALUE,
            },
            "maxProperties": MAX_HEADERS,
            "description": "Custom headers NAME: VALUE; Content-Type, Content-Length, Host, "
            "X-Service-Signature, the hop-by-hop and framing headers (Transfer-Encoding, "
            "Connection, Keep-Alive, TE, Trailer, Upgrade, Expect, Proxy-*) are refused, "
            "and names differing only in case too.",
        }
    ),
]
"""Custom headers as written (service requests); the provisioner checks its
sensitive values with `header_problems`. A model holding one sets
`hide_input_in_errors=True`, or pydantic's error text would show the values."""

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
            raise _fail("op 'exists' takes no value")
        if self.op != "exists" and (not given or self.value is None):
            # null is refused so that an absent value and a null one read back the same.
            raise _fail(f"op '{self.op}' needs a value (not null)")
        if self.op == "in" and (not isinstance(self.value, list) or not self.value):
            raise _fail("op 'in' needs a non-empty list as its value")
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
            raise _fail("'*' stands alone: it already means every event")
        seen: set[str] = set()
        for rule in rules:
            if rule in seen:
                raise _fail(f"'{rule}' is listed twice (eventRules is a set)")
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
                raise _fail(f"fieldFilters[{i}] is on {f.event}, which eventRules does not include")
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
