"""The `webhookAttachments` kind: a webhook integration's attachments to agents
(docs/service/contract.md#attachments), written inside each webhook in YAML
(`attachments:`) but objects of their own in the API
(`PUT/DELETE /agents/{agentId}/webhooks/{integrationId}`), without a GET of their own:
they are read in their integration's list. The settings' rules (event rules, field
filters) are the service's own, from `rules/webhook_attachments.py`.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ConfigDict, Field

from agentform.api.together import all_or_none
from agentform.core.diagnostics import Diagnostics
from agentform.core.frozen import FrozenDict, FrozenMap
from agentform.kinds.base import Kind
from agentform.kinds.context import LiveRead, PlanContext
from agentform.kinds.keys import Key, address
from agentform.kinds.model import ApiCall, Declared, LiveObject, State
from agentform.kinds.references import References
from agentform.rules.webhook_attachments import AttachmentSettings
from agentform.rules.webhook_events import BATCH_EVENTS
from agentform.rules.webhook_integrations import INTEGRATIONS_PATH

COLLECTION = INTEGRATIONS_PATH


class AttachmentDesired(AttachmentSettings):
    """One attachment as written inside its webhook: the agent, and the settings
    it manages (a setting left out is not managed)."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, title="WebhookAttachment", defer_build=True
    )
    agent: str = Field(min_length=1, description="The agent's name (or id)")


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
