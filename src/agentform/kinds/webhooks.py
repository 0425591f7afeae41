"""The `webhooks` kind: webhook integrations
(docs/service/contract.md#webhook-integrations), and `webhookAttachments`, their
attachments to agents, written inside each webhook in YAML but objects of their own in
the API (`PUT/DELETE /agents/{agentId}/webhooks/{integrationId}`).

Header values are sensitive: states hold only their digests (which include the
live integration id, so the comparison needs the live object), plans hold
`(sensitive)` and a slot, and apply takes the value from the workspace. The
rules (event names, header names, URL, payload version, attachment settings)
are the service's own, from `rules/webhooks.py`.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Annotated, Any, ClassVar

from pydantic import ConfigDict, Field

from agentform.api.together import all_or_none
from agentform.core.diagnostics import Diagnostics
from agentform.core.frozen import FrozenDict, FrozenMap
from agentform.core.sensitive import AllowSensitive, Sensitive, reveal
from agentform.kinds.base import ApiCall, Decision, Declared, DesiredModel, Kind, LiveObject, State
from agentform.kinds.context import LiveRead, PlanContext
from agentform.kinds.keys import Key, address
from agentform.kinds.references import References
from agentform.kinds.slots import KNOWN_AFTER_CREATE, sensitive_value
from agentform.rules.webhooks import (
    BATCH_EVENTS,
    PAYLOAD_VERSION,
    AttachmentSettings,
    HeaderMap,
    IntegrationName,
    IntegrationUrl,
    PayloadVersion,
    header_digest,
)

COLLECTION = "/webhook-integrations"

# Header values may come from secret(): the shared rules' map (its checks and its
# JSON Schema), its values checked by value and kept marked.
DesiredHeaderMap = Annotated[dict[str, str | Sensitive], AllowSensitive(HeaderMap)]


class AttachmentDesired(AttachmentSettings):
    """One attachment as written inside its webhook: the agent, and the settings
    it manages (a setting left out is not managed)."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="WebhookAttachment")
    agent: str = Field(min_length=1, description="The agent's name (or id)")


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


class AttachmentState(State):
    agent: str  # names, for people and keys
    webhook: str
    agentId: str  # ids, for the calls (integrationId may be known only after create)
    integrationId: str
    eventRules: frozenset[str] = frozenset()
    fieldFilters: frozenset[str] = frozenset()  # canonical JSON of each rule: a set of rules
    metadataFilter: FrozenMap = {}
    unwrapResult: bool = False


SETTINGS = ("eventRules", "fieldFilters", "metadataFilter", "unwrapResult")


class WebhookAttachments(Kind):
    name = "webhookAttachments"
    label = "attachment"
    collection = COLLECTION
    desired_model = AttachmentDesired
    parent = "webhooks"
    identity_fields = ("agent", "webhook", "agentId", "integrationId")
    key_references = ("agents",)
    set_fields = ("eventRules", "fieldFilters")

    def key_of(self, declared: Declared, references: References | None = None) -> Key:
        model, parent = declared.model, declared.parent
        assert isinstance(model, AttachmentDesired) and parent is not None
        agent = references["agents"].canonical(model.agent) if references else model.agent
        return Key(agent, parent.model.name)  # type: ignore[attr-defined]

    def parent_key(self, key: Key) -> Key:
        return Key(key[1])

    async def read_back(self, api: Any, path: str) -> Any:
        """An attachment has no GET of its own: it is found in its agent's list."""
        agent_path, _, integration_id = path.rpartition("/")
        listed = await api.list_all(agent_path, identity="integrationId")
        return next((a for a in listed if a["integrationId"] == integration_id), None)

    def created_holds(self, field: str, asked: Any, found: dict[str, Any]) -> bool:
        """Event rules and field filters are sets: their order is not compared."""
        if field == "eventRules":
            return set(asked) == set(found[field] or ())
        if field == "fieldFilters":
            return {_canonical(f) for f in asked} == {_canonical(f) for f in found[field] or ()}
        return super().created_holds(field, asked, found)

    def under_parent(self, key: Key, parent: Key) -> Key:
        return Key(key[0], parent[0])

    def check(self, declared: list[Declared], diagnostics: Diagnostics) -> None:
        """Batch events carry no execution metadata: named under a metadataFilter,
        they are never sent (the service accepts it; the user surely did not mean it)."""
        for item in declared:
            model, parent = item.model, item.parent
            assert isinstance(model, AttachmentDesired) and parent is not None
            if not model.metadataFilter:
                continue
            for event in (e for e in BATCH_EVENTS if e in (model.eventRules or ())):
                diagnostics.warning(
                    f"webhook {parent.model.name}, agent {model.agent}: {event} is never "  # type: ignore[attr-defined]
                    "sent under a metadataFilter (batch events carry no execution "
                    "metadata); attach it through another webhook, without a metadataFilter",
                    item.position,
                    address=address(self.name, self.key_of(item)),
                )

    async def read_live(self, read: LiveRead) -> list[LiveObject]:
        parents = list(read.parents.values())
        lists = await all_or_none(
            *(
                read.api.list_all(f"{COLLECTION}/{p.id}/attachments", identity="agentId")
                for p in parents
            )
        )
        if any(lists):
            await read.references.load(("agents",))
        agents = read.references["agents"]
        out = []
        for parent, attachments in zip(parents, lists, strict=True):
            for item in attachments:
                agent = agents.name_of(item["agentId"])
                state = AttachmentState(
                    agent=agent,
                    webhook=parent.key[0],
                    agentId=item["agentId"],
                    integrationId=parent.id,
                    eventRules=frozenset(item["eventRules"]),
                    fieldFilters=frozenset(_canonical(f) for f in item.get("fieldFilters", [])),
                    metadataFilter=FrozenDict(item.get("metadataFilter") or {}),
                    unwrapResult=item.get("unwrapResult", False),
                )
                live_id = f"{item['agentId']}/{parent.id}"
                out.append(LiveObject(Key(agent, parent.key[0]), live_id, state, item))
        return out

    def desired_state(
        self, declared: Declared, ctx: PlanContext, live: LiveObject | None
    ) -> State | None:
        model, parent = declared.model, declared.parent
        assert isinstance(model, AttachmentDesired) and parent is not None
        webhook = parent.model.name  # type: ignore[attr-defined]
        agents = ctx.references["agents"]
        agent_id = agents.resolve(model.agent)
        if agent_id is None:
            ctx.diagnostics.error(
                f"webhook {webhook}: no agent named '{model.agent}'" + agents.suggest(model.agent),
                declared.position,
            )
            return None
        integration_id = ctx.id_of("webhooks", Key(webhook))
        if integration_id is None:
            return None  # the webhook itself could not be planned; its error says why
        fields: dict[str, Any] = {
            "agent": agents.name_of(agent_id),
            "webhook": webhook,
            "agentId": agent_id,
            "integrationId": integration_id,
        }
        managed = model.model_fields_set & set(SETTINGS)
        settings = model.model_dump(include=managed, mode="json")
        if "eventRules" in settings:
            fields["eventRules"] = frozenset(settings["eventRules"])
        if "fieldFilters" in settings:
            fields["fieldFilters"] = frozenset(_canonical(f) for f in settings["fieldFilters"])
        if "metadataFilter" in settings:
            fields["metadataFilter"] = FrozenDict(settings["metadataFilter"])
        if "unwrapResult" in settings:
            fields["unwrapResult"] = settings["unwrapResult"]
        return AttachmentState(**fields)

    def display(self, field: str, value: Any, ctx: PlanContext) -> Any:
        if field == "fieldFilters":
            return [json.loads(v) for v in sorted(value)]
        return super().display(field, value, ctx)

    def show(self, state: State, ctx: PlanContext) -> dict[str, Any]:
        shown = super().show(state, ctx)  # agent and webhook are in the key already
        return {k: v for k, v in shown.items() if k not in self.identity_fields}

    def _put(self, state: AttachmentState, settings: dict[str, Any]) -> ApiCall:
        path = f"/agents/{state.agentId}/webhooks/{state.integrationId}"
        return ApiCall(method="PUT", path=path, body=settings, idempotent=True)

    def _settings(self, state: AttachmentState, base: AttachmentState | None) -> dict[str, Any]:
        """Every setting (PUT replaces the attachment): managed ones from `state`,
        the others as they are live (`base`), or their defaults."""
        source = {f: getattr(base or state, f) for f in SETTINGS}
        source |= {f: getattr(state, f) for f in state.model_fields_set & set(SETTINGS)}
        return {
            "eventRules": sorted(source["eventRules"]),
            "fieldFilters": [json.loads(f) for f in sorted(source["fieldFilters"])],
            "metadataFilter": dict(source["metadataFilter"]),
            "unwrapResult": source["unwrapResult"],
        }

    def create_calls(self, desired: State) -> list[ApiCall]:
        assert isinstance(desired, AttachmentState)
        return [self._put(desired, self._settings(desired, None))]

    def update_calls(self, live: LiveObject, desired: State, changed: set[str]) -> list[ApiCall]:
        assert isinstance(desired, AttachmentState) and isinstance(live.state, AttachmentState)
        return [self._put(desired, self._settings(desired, live.state))]

    def required_to_create(self) -> tuple[str, ...]:
        return ("eventRules",)

    def delete_calls(self, live: LiveObject) -> list[ApiCall]:
        assert isinstance(live.state, AttachmentState)
        path = f"/agents/{live.state.agentId}/webhooks/{live.state.integrationId}"
        return [ApiCall(method="DELETE", path=path)]

    def export(
        self, live: LiveObject, ctx: PlanContext, children: dict[str, list[dict[str, Any]]]
    ) -> dict[str, Any]:
        state = live.state
        assert isinstance(state, AttachmentState)
        out: dict[str, Any] = {"agent": state.agent, "eventRules": sorted(state.eventRules)}
        if state.fieldFilters:
            out["fieldFilters"] = self.display("fieldFilters", state.fieldFilters, ctx)
        if state.metadataFilter:
            out["metadataFilter"] = dict(state.metadataFilter)
        if state.unwrapResult:
            out["unwrapResult"] = True
        return out


def _canonical(rule: dict[str, Any]) -> str:
    """A field filter as canonical JSON (value left out when absent), for set comparison."""
    clean = {k: v for k, v in rule.items() if not (k == "value" and v is None)}
    return json.dumps(clean, sort_keys=True, separators=(",", ":"))
