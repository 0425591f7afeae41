"""The `batches` kind: scheduled execution batches
(docs/service/contract.md#execution-batches, docs/guide/kinds.md#batches).

A batch is keyed by (agent, name) among batches that are not cancelled
(cancelled ones are history and never match). Its lifecycle decides what a
difference means (kinds/batch_lifecycle.py); its data is kinds/batch_model.py.

Items of pending declared batches are read (`/items`) and compared one by one;
other batches are compared by their item count.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from agentform.api.together import all_or_none
from agentform.core.bounds import Bounds
from agentform.core.diagnostics import Diagnostics, Position
from agentform.kinds.batch_items import resolve_items, shown_item
from agentform.kinds.batch_lifecycle import BatchLifecycle
from agentform.kinds.batch_model import BatchDesired, BatchState, iso
from agentform.kinds.context import LiveRead, PlanContext
from agentform.kinds.items_file import read_items_file
from agentform.kinds.keys import Key
from agentform.kinds.model import (
    ApiCall,
    Declared,
    FieldChange,
    LiveObject,
    State,
)
from agentform.kinds.references import References

COLLECTION = "/execution-batches"


def _group(batch: dict[str, Any]) -> str | None:
    """A batch's concurrency group; None for its own id, the default (as if not set)."""
    group = batch.get("concurrencyGroupId")
    return None if group == batch["id"] else group


class Batches(BatchLifecycle):
    name = "batches"
    label = "batch"
    summary = "Scheduled execution batches (docs/service/contract.md#execution-batches)."
    collection = COLLECTION
    not_renamable = "a batch's name cannot be changed (the API has no PATCH of a batch)"
    desired_model = BatchDesired
    depends_on = ("profilePools",)  # items name pools (by name or id)
    identity_fields = ("agent", "name", "agentId")
    key_references = ("agents",)

    def key_of(self, declared: Declared, references: References | None = None) -> Key:
        model = declared.model
        assert isinstance(model, BatchDesired)
        agent = references["agents"].canonical(model.agent) if references else model.agent
        return Key(agent, model.name)

    async def find_created(self, api: Any, key: Key, body: Any) -> Any:
        items = await api.list_all(
            self.collection, {"agentId": body["agentId"], "searchName": key[1]}
        )
        return next((i for i in items if i["name"] == key[1] and i["status"] != "cancelled"), None)

    def created_holds(self, field: str, asked: Any, found: dict[str, Any]) -> bool:
        """startAt compares as an instant (the service writes it its own way)."""
        if field != "startAt":
            return super().created_holds(field, asked, found)
        return iso(datetime.fromisoformat(asked)) == iso(datetime.fromisoformat(found[field]))

    # -- offline -------------------------------------------------------------
    def expand(
        self, declared: Declared, folder: Path, bounds: Bounds, diagnostics: Diagnostics
    ) -> tuple[Declared, list[tuple[Path, bytes]]]:
        model = declared.model
        assert isinstance(model, BatchDesired)
        if model.itemsFile is None:
            return declared, []
        if model.items is not None:
            diagnostics.error(
                f"batch {model.name}: give items or itemsFile, not both", declared.position
            )
            return declared, []
        path = bounds.inside(model.itemsFile, folder)
        if path is None:
            diagnostics.error(
                f"itemsFile {bounds.refused(model.itemsFile)}",
                declared.at("itemsFile"),
            )
            return declared, []
        read = read_items_file(path, bounds.name(path), declared.at("itemsFile"), diagnostics)
        if read is None:
            return declared, []
        items, positions, content = read

        def locate(at: tuple[str | int, ...]) -> Position:
            """An item is where the file holds it; the rest where the YAML has it."""
            if at[:1] == ("items",) and len(at) > 1 and isinstance(at[1], int):
                return positions[at[1]]
            return declared.at(*at)

        expanded = model.model_copy(update={"items": items})
        return Declared(expanded, declared.position, declared.parent, locate), [(path, content)]

    def references_needed(self, declared: list[Declared]) -> set[str]:
        present = [d.model for d in declared if d.present and isinstance(d.model, BatchDesired)]
        if not present:
            return set()
        items = (i for model in present for i in model.items or [])
        by_profile = any(i.agentProfile or i.agentProfileId for i in items)
        return {"agents", "profiles"} if by_profile else {"agents"}

    # -- reading -------------------------------------------------------------
    async def read_live(self, read: LiveRead) -> list[LiveObject]:
        listed = await read.api.list_all(self.collection)
        batches = [b for b in listed if b["status"] != "cancelled"]  # history: never matched
        if batches:
            await read.references.load(("agents",))
        agents = read.references["agents"]
        keyed = [(Key(agents.name_of(b["agentId"]), b["name"]), b) for b in batches]
        deep = [
            b
            for key, b in keyed
            if key in read.managed
            and (b["status"] == "pending" or (read.exhaustive and b["status"] != "completed"))
        ]
        lists = await all_or_none(
            *(read.api.list_all(f"{self.collection}/{b['id']}/items") for b in deep)
        )
        items = {b["id"]: [i["request"] for i in page] for b, page in zip(deep, lists, strict=True)}
        out = []
        for key, batch in keyed:
            raw = dict(batch)
            fields: dict[str, Any] = {
                "agent": key[0],
                "name": batch["name"],
                "agentId": batch["agentId"],
                "startAt": iso(datetime.fromisoformat(batch["startAt"])),
                "config": batch["config"],
                "concurrencyGroupId": _group(batch),
                "itemCount": batch.get("totalCount", 0),
            }
            if batch["id"] in items:
                raw["items"] = items[batch["id"]]
                fields["items"] = tuple(items[batch["id"]])
            out.append(LiveObject(key, batch["id"], BatchState(**fields), raw))
        return out

    # -- planning ------------------------------------------------------------
    def desired_state(
        self, declared: Declared, ctx: PlanContext, live: LiveObject | None
    ) -> State | None:
        model = declared.model
        assert isinstance(model, BatchDesired)
        agents = ctx.references["agents"]
        agent_id = agents.resolve(model.agent)
        if agent_id is None:
            ctx.diagnostics.error(
                f"batch {model.name}: no agent named '{model.agent}'" + agents.suggest(model.agent),
                declared.position,
            )
            if model.items is not None:  # their names are checked all the same
                resolve_items(model.items, None, ctx, f"batch {model.name}", declared)
            return None
        fields: dict[str, Any] = {
            "agent": agents.name_of(agent_id),
            "name": model.name,
            "agentId": agent_id,
        }
        if model.startAt is not None:
            fields["startAt"] = iso(model.startAt)
        if model.config is not None:
            fields["config"] = model.config.model_dump()
        if model.concurrencyGroupId is not None:
            fields["concurrencyGroupId"] = str(model.concurrencyGroupId)
        if model.items is not None:
            label = f"batch {model.name}"
            items = resolve_items(model.items, agent_id, ctx, label, declared)
            if items is None:
                return None
            fields["items"] = items
        return BatchState(**fields)

    def required_to_create(self) -> tuple[str, ...]:
        return ("startAt", "config", "items")

    def diff(self, desired: State, live: LiveObject, ctx: PlanContext) -> list[FieldChange]:
        assert isinstance(desired, BatchState) and isinstance(live.state, BatchState)
        if "items" in live.state.model_fields_set or "items" not in desired.model_fields_set:
            return super().diff(desired, live, ctx)
        # Items not read (the batch is not pending): compared by their count.
        changes = []
        for name in sorted(desired.model_fields_set - {"items", *self.identity_fields}):
            change = self.diff_field(name, getattr(desired, name), getattr(live.state, name), ctx)
            if change is not None:
                changes.append(change)
        want, have = len(desired.items), live.state.itemCount
        if want != have:
            count = FieldChange(field="items", before=f"{have} items", after=f"{want} items")
            changes.append(count)
        return sorted(changes, key=lambda c: c.field)

    def create_calls(self, desired: State) -> list[ApiCall]:
        assert isinstance(desired, BatchState)
        body: dict[str, Any] = {
            "agentId": desired.agentId,
            "name": desired.name,
            "startAt": desired.startAt,
            "config": dict(desired.config),
            "items": [dict(i) for i in desired.items],
        }
        if desired.concurrencyGroupId is not None:
            body["concurrencyGroupId"] = desired.concurrencyGroupId
        return [ApiCall(method="POST", path=self.collection, body=body, creates=True)]

    def update_calls(self, live: LiveObject, desired: State, changed: set[str]) -> list[ApiCall]:
        raise AssertionError("batches are replaced or left alone, never updated")

    # -- showing ---------------------------------------------------------------
    def display(self, field: str, value: Any, ctx: PlanContext) -> Any:
        if field == "items" and isinstance(value, tuple):
            return [shown_item(dict(i), ctx) for i in value]
        return super().display(field, value, ctx)

    def show(self, state: State, ctx: PlanContext) -> dict[str, Any]:
        shown = super().show(state, ctx)
        return {k: v for k, v in shown.items() if k not in ("agentId", "itemCount")}

    def exports(self, live: LiveObject) -> bool:
        return bool(live.raw["status"] != "completed")  # finished batches are history

    def export(
        self, live: LiveObject, ctx: PlanContext, children: dict[str, list[dict[str, Any]]]
    ) -> dict[str, Any]:
        state = live.state
        assert isinstance(state, BatchState)
        out: dict[str, Any] = {
            "name": state.name,
            "agent": state.agent,
            "startAt": state.startAt,
            "config": dict(state.config),
        }
        if state.concurrencyGroupId is not None:
            out["concurrencyGroupId"] = state.concurrencyGroupId
        out["items"] = self.display("items", state.items, ctx)
        return out
