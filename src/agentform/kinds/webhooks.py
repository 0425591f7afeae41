"""The `webhooks` kind: webhook integrations
(docs/service/contract.md#webhook-integrations). Their attachments to agents are written
inside each webhook in YAML (`attachments:`) but are a kind of their own,
`webhookAttachments` (kinds/webhook_attachments.py).

Header values are sensitive: states hold only their digests (which include the
live integration id, so the comparison needs the live object), plans hold
`(sensitive)` and a slot, and apply takes the value from the workspace. The
rules (name, URL, payload version, header names and values) are the service's
own, from `rules/webhook_integrations.py`.
"""

from __future__ import annotations

import itertools
import re
from typing import Annotated, Any, ClassVar

from pydantic import ConfigDict, Field

from agentform.core.frozen import FrozenDict, FrozenMap
from agentform.core.sensitive import AllowSensitive, Sensitive, reveal
from agentform.kinds.base import Kind
from agentform.kinds.context import LiveRead, PlanContext
from agentform.kinds.keys import Key, address
from agentform.kinds.model import ApiCall, Decision, Declared, DesiredModel, LiveObject, State
from agentform.kinds.slots import KNOWN_AFTER_CREATE, sensitive_value
from agentform.kinds.webhook_attachments import AttachmentDesired
from agentform.rules.webhook_integrations import (
    INTEGRATIONS_PATH,
    PAYLOAD_VERSION,
    HeaderMap,
    IntegrationName,
    IntegrationUrl,
    PayloadVersion,
    header_digest,
)

COLLECTION = INTEGRATIONS_PATH

# Header values may come from secret(): the shared rules' map (its checks and its
# JSON Schema), its values checked by value and kept marked.
DesiredHeaderMap = Annotated[dict[str, str | Sensitive], AllowSensitive(HeaderMap)]


class WebhookDesired(DesiredModel):
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)  # header values
    name: IntegrationName = Field(
        description="The integration's name: its identity (unique in the organization)",
        examples=["ops-alerts"],
    )
    url: IntegrationUrl | None = Field(
        None,
        description="Where notifications are POSTed (absolute http or https URL)",
        examples=["https://hooks.example.com/agent-events"],
    )
    payloadVersion: PayloadVersion | None = Field(
        None,
        description="Only v2 (docs/service/contract.md#webhook-integrations); leave out for "
        "the default",
    )
    headers: DesiredHeaderMap | None = Field(
        None,
        description="Custom headers, the complete set (values are sensitive: use secret())",
    )
    attachments: list[AttachmentDesired] | None = Field(
        None, description="The agents this integration is attached to: the complete set"
    )


class WebhookState(State):
    name: str
    url: str | None = None
    payloadVersion: str = PAYLOAD_VERSION
    headers: FrozenMap = {}  # NAME -> digest of (integration id, NAME, value)


def header_slot(webhook: str, header: str) -> str:
    """The name under which apply finds a header's value (never in the plan)."""
    return f"{address('webhooks', Key(webhook))}/headers/{header}"


def _digest(live: LiveObject, header: str, value: str | Sensitive) -> str:
    return _digest_of(live.id, header, value)


def _digest_of(integration_id: str, header: str, value: str | Sensitive) -> str:
    """The digest the service answers for this value (an unset secret: none matches)."""
    if isinstance(value, Sensitive) and not value.resolved:
        return "(not set)"
    return header_digest(integration_id, header, reveal(value))


def secret_name(webhook: str, header: str) -> str:
    """The environment variable export names for a header value: OPS_ALERTS_AUTHORIZATION."""
    return re.sub(r"[^A-Za-z0-9]+", "_", f"{webhook}_{header}").strip("_").upper()


def secret_names(webhooks: list[LiveObject]) -> dict[tuple[str, str], str]:
    """(webhook, header) -> its variable, one of its own: when two would share one
    (`a-b` and `a_b`), the later in name order gets `_2`, `_3`..."""
    out: dict[tuple[str, str], str] = {}
    taken: set[str] = set()
    for hook in sorted(webhooks, key=lambda o: o.key):
        assert isinstance(hook.state, WebhookState)
        for header in sorted(hook.state.headers):
            base = name = secret_name(hook.state.name, header)
            for n in itertools.count(2):
                if name not in taken:
                    break
                name = f"{base}_{n}"
            taken.add(name)
            out[(hook.state.name, header)] = name
    return out


class Webhooks(Kind):
    name = "webhooks"
    label = "webhook"
    summary = (
        "Webhook integrations and their attachments "
        "(docs/service/contract.md#webhook-integrations)."
    )
    collection = COLLECTION
    desired_model = WebhookDesired
    children: ClassVar[dict[str, str]] = {"attachments": "webhookAttachments"}
    sensitive_fields = ("headers",)

    def sensitive_values(self, declared: list[Declared]) -> dict[str, str | Sensitive]:
        out: dict[str, str | Sensitive] = {}
        for item in declared:
            model = item.model
            assert isinstance(model, WebhookDesired)
            for header, value in (model.headers or {}).items():
                if isinstance(value, Sensitive) and not value.resolved:
                    continue  # export with the secret unset: no value to send
                out[header_slot(model.name, header)] = value  # marked until sent
        return out

    async def read_live(self, read: LiveRead) -> list[LiveObject]:
        out = []
        for item in await read.api.list_all(self.collection):
            headers = {k: v["digest"] for k, v in (item.get("headers") or {}).items()}
            state = WebhookState(
                name=item["name"],
                url=item["url"],
                payloadVersion=item.get("payloadVersion", PAYLOAD_VERSION),
                headers=FrozenDict(headers),
            )
            out.append(LiveObject(Key(item["name"]), item["id"], state, item))
        return out

    def desired_state(
        self, declared: Declared, ctx: PlanContext, live: LiveObject | None
    ) -> State | None:
        model = declared.model
        assert isinstance(model, WebhookDesired)
        fields: dict[str, Any] = {"name": model.name}
        for name in ("url", "payloadVersion"):
            if getattr(model, name) is not None:
                fields[name] = getattr(model, name)
        if model.headers is not None:
            # The live id reaches the comparison: digests are of (id, name, value).
            fields["headers"] = FrozenDict(
                {
                    header: _digest(live, header, value) if live else KNOWN_AFTER_CREATE
                    for header, value in model.headers.items()
                }
            )
        return WebhookState(**fields)

    def required_to_create(self) -> tuple[str, ...]:
        return ("url",)

    def created_holds(self, field: str, asked: Any, found: dict[str, Any]) -> bool:
        """Header values are answered as digests: compared through them."""
        if field != "headers" or not isinstance(asked, dict):
            return super().created_holds(field, asked, found)
        live = {k: (v or {}).get("digest") for k, v in (found[field] or {}).items()}
        return set(live) == set(asked) and all(
            live[h] == _digest_of(found["id"], h, v) for h, v in asked.items()
        )

    def decide_delete(self, live: LiveObject, reason: str, ctx: PlanContext) -> Decision:
        calls = tuple(self.delete_calls(live))
        return Decision("delete", f"{reason} (its attachments go with it)", calls)

    def _body(self, state: State, names: set[str]) -> dict[str, Any]:
        assert isinstance(state, WebhookState)
        body = state.model_dump(include=names - {"headers"})
        if "headers" in names:  # the whole map: PATCH replaces it
            slots = {h: sensitive_value(header_slot(state.name, h)) for h in state.headers}
            body["headers"] = slots
        return body

    def create_calls(self, desired: State) -> list[ApiCall]:
        body = self._body(desired, set(desired.model_fields_set))
        return [ApiCall(method="POST", path=self.collection, body=body, creates=True)]

    def update_calls(self, live: LiveObject, desired: State, changed: set[str]) -> list[ApiCall]:
        body = self._body(desired, changed)
        return [ApiCall(method="PATCH", path=f"{self.collection}/{live.id}", body=body)]

    def _secret_names(self, ctx: PlanContext, live: LiveObject) -> dict[tuple[str, str], str]:
        """The variables of every exported header value, worked out once per export."""
        hooks = ctx.live.get(self.name, {})
        if live.key not in hooks:
            return secret_names([live])
        cached = getattr(self, "_names", None)
        if cached is None or cached[0] is not hooks:
            cached = (hooks, secret_names(list(hooks.values())))
            self._names = cached
        return cached[1]

    def export(
        self, live: LiveObject, ctx: PlanContext, children: dict[str, list[dict[str, Any]]]
    ) -> dict[str, Any]:
        assert isinstance(live.state, WebhookState)
        out: dict[str, Any] = {"name": live.state.name, "url": live.state.url}
        if live.state.headers:
            names = self._secret_names(ctx, live)
            out["headers"] = {
                h: '{{ secret("' + names[(live.state.name, h)] + '") }}'
                for h in sorted(live.state.headers)
            }
        if children.get("webhookAttachments"):
            out["attachments"] = children["webhookAttachments"]
        return out
