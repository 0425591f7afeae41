"""The Plan: a frozen, serialisable value that `plan` shows and `apply` executes."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ..kinds.base import ApiCall, FieldChange

FORMAT_VERSION = 1
Action = Literal["create", "update", "delete"]


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Change(Frozen):
    id: str  # "kind/key"
    kind: str
    key: str
    action: Action
    reason: str
    liveId: str | None = None
    changedFields: list[FieldChange] = []
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    calls: list[ApiCall]
    dependsOn: list[str] = []


class NoOp(Frozen):
    kind: str
    key: str
    reason: str


class Summary(Frozen):
    create: int = 0
    update: int = 0
    delete: int = 0
    unchanged: int = 0
    unmanaged: int = 0


class Plan(Frozen):
    formatVersion: int = FORMAT_VERSION
    workspace: str
    endpoint: str
    organizationId: str
    organizationName: str
    changes: list[Change]
    noops: list[NoOp] = []
    unmanaged: dict[str, int] = {}
    warnings: list[str] = []
    summary: Summary
    inputsDigest: str
    fingerprints: dict[str, str]  # "kind/key" -> hash of the live object read, or "absent"
    reads: dict[str, list[str]] = {}  # kind -> keys read in depth (members), for re-reads
    secretDigests: dict[str, str] = {}  # NAME -> salted digest of the value
    secretSalt: str = ""

    @property
    def has_changes(self) -> bool:
        return bool(self.changes)
