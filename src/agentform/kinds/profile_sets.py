"""Shared implementation of the two same-shaped kinds: profile pools and groups.

`profile_pools.py` and `profile_groups.py` each bind it to one collection.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, StrictBool

from agentform.core.sensitive import Text, shown
from agentform.kinds.base import FieldDocs, Kind
from agentform.kinds.context import LiveRead, PlanContext
from agentform.kinds.keys import Key
from agentform.kinds.model import ApiCall, Declared, DesiredModel, LiveObject, State
from agentform.rules.profile_sets import (
    DEFAULT_ALLOW_CONCURRENT_USE,
    DEFAULT_SELECTION_STRATEGY,
    MEMBERS_PER_CALL,
    Name,
)
from agentform.rules.profile_sets import SelectionStrategy as Strategy


class ProfileSetDesired(DesiredModel):
    name: Name
    selectionStrategy: Strategy | None = None
    allowConcurrentUse: StrictBool | None = None  # `no` is a word, not false
    members: list[Text] | None = Field(
        None, description="Profile names or ids: the complete member set. Omit to leave unmanaged."
    )


class ProfileSetState(State):
    name: str
    selectionStrategy: Strategy = DEFAULT_SELECTION_STRATEGY
    allowConcurrentUse: bool = DEFAULT_ALLOW_CONCURRENT_USE
    members: frozenset[str] = frozenset()  # profile ids


class ProfileSetKind(Kind):
    desired_model = ProfileSetDesired
    references = ("profiles",)
    set_fields = ("members",)
    member_path: ClassVar[str] = "/members"
    SCALARS: ClassVar[tuple[str, ...]] = ("selectionStrategy", "allowConcurrentUse")
    field_docs: ClassVar[FieldDocs] = {
        "ProfileSetDesired.name": (
            "The name: the identity of the pool or group (unique in the organization).",
            ["checkout-eu"],
        ),
        "ProfileSetDesired.selectionStrategy": (
            "Which free profile an execution gets. Omit to leave it unmanaged.",
            ["least_recently_used"],
        ),
        "ProfileSetDesired.allowConcurrentUse": (
            "Whether one profile may serve several executions at once. Omit to leave it unmanaged.",
            [False],
        ),
    }

    def references_needed(self, declared: list[Declared]) -> set[str]:
        present = [d for d in declared if d.present]
        return (
            {"profiles"}
            if any(getattr(d.model, "members", None) is not None for d in present)
            else set()
        )

    def read_in_depth(self, declared: Declared) -> bool:
        return getattr(declared.model, "members", None) is not None

    async def read_live(self, read: LiveRead) -> list[LiveObject]:
        api = read.api
        items, members = await api.list_and_read(
            self.collection,
            lambda item: Key(item["name"]) in read.managed,
            lambda item: api.list_all(f"{self.collection}/{item['id']}/members"),
        )
        out = []
        for item in items:
            raw = dict(item)
            fields: dict[str, Any] = {k: item[k] for k in ("name", *self.SCALARS)}
            if item["id"] in members:
                ids = sorted(m["id"] for m in members[item["id"]])
                raw["members"] = ids
                fields["members"] = frozenset(ids)
            out.append(LiveObject(Key(item["name"]), item["id"], ProfileSetState(**fields), raw))
        return out

    def desired_state(
        self, declared: Declared, ctx: PlanContext, live: LiveObject | None
    ) -> State | None:
        model = declared.model
        assert isinstance(model, ProfileSetDesired)
        fields = model.model_dump(include=model.model_fields_set - {"ensure"}, exclude_none=True)
        if model.members is not None:
            profiles = ctx.references["profiles"]
            ids = []
            for i, ref in enumerate(model.members):
                resolved = profiles.resolve(ref)
                if resolved is None:
                    ctx.diagnostics.error(
                        f"{self.label} {model.name}: members.{i}: no profile named "
                        f"{shown(ref)}{profiles.suggest(ref)}",
                        declared.at("members", i),
                    )
                else:
                    ids.append(resolved)
            fields["members"] = frozenset(ids)
        return ProfileSetState(**fields)

    def create_calls(self, desired: State) -> list[ApiCall]:
        assert isinstance(desired, ProfileSetState)
        body = desired.model_dump(include=desired.model_fields_set - {"members"})
        calls = [ApiCall(method="POST", path=self.collection, body=body, creates=True)]
        for chunk in chunks(sorted(desired.members), MEMBERS_PER_CALL):
            calls.append(
                ApiCall(
                    method="POST",
                    path=f"{self.collection}/{{id}}/members",
                    body={"profileIds": chunk},
                    # adding a member twice changes nothing
                    # (docs/service/contract.md#profile-pools-and-profile-groups)
                    idempotent=True,
                )
            )
        return calls

    def update_calls(self, live: LiveObject, desired: State, changed: set[str]) -> list[ApiCall]:
        assert isinstance(desired, ProfileSetState) and isinstance(live.state, ProfileSetState)
        path = f"{self.collection}/{live.id}"
        patch = desired.model_dump(include=changed - {"members"})
        calls = [ApiCall(method="PATCH", path=path, body=patch)] if patch else []
        if "members" in changed:
            for chunk in chunks(sorted(desired.members - live.state.members), MEMBERS_PER_CALL):
                calls.append(
                    ApiCall(
                        method="POST",
                        path=f"{path}/members",
                        body={"profileIds": chunk},
                        idempotent=True,
                    )
                )
            for chunk in chunks(sorted(live.state.members - desired.members), MEMBERS_PER_CALL):
                calls.append(
                    ApiCall(method="DELETE", path=f"{path}/members", body={"profileIds": chunk})
                )
        return calls

    def display(self, field: str, value: Any, ctx: PlanContext) -> Any:
        if field == "members":
            return sorted(ctx.references["profiles"].name_of(i) for i in value)
        return super().display(field, value, ctx)


def chunks(items: list[str], size: int) -> list[list[str]]:
    return [items[i : i + size] for i in range(0, len(items), size)]
