"""The planner's field-level comparison of nested values (Kind.diff_field): equal
values built apart are no change, whatever their order where order does not count;
one nested leaf that differs is a change of that field, shown as the user writes it;
a map of header digests is compared key by key, its values never shown."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

from agentform.kinds.base import Kind
from agentform.kinds.context import PlanContext
from agentform.kinds.model import FieldChange
from agentform.kinds.webhook_attachments import AttachmentState
from agentform.kinds.webhooks import WebhookState

NO_CONTEXT = cast(PlanContext, None)  # these fields are shown without names to resolve
ATTACHMENTS = Kind.registry["webhookAttachments"]
WEBHOOKS = Kind.registry["webhooks"]
IDS = {"agent": "a", "webhook": "w", "agentId": "a-1", "integrationId": "i-1"}


def attachment(
    filters: Sequence[Mapping[str, str]], metadata: Mapping[str, Any]
) -> AttachmentState:
    canonical = frozenset(json.dumps(f, sort_keys=True, separators=(",", ":")) for f in filters)
    return AttachmentState(**IDS, fieldFilters=canonical, metadataFilter=metadata)


def test_nested_values_built_apart_and_equal_are_no_change() -> None:
    filters = [{"field": "status", "op": "eq", "value": "done"}, {"field": "x", "op": "exists"}]
    metadata = {"team": {"name": "pay", "tags": ["eu", "prod"]}}
    want = attachment(filters, metadata)
    have = attachment(list(reversed(filters)), json.loads(json.dumps(metadata)))
    for field in ("fieldFilters", "metadataFilter"):
        assert (
            ATTACHMENTS.diff_field(field, getattr(want, field), getattr(have, field), NO_CONTEXT)
            is None
        )


def test_one_nested_leaf_that_differs_changes_the_field() -> None:
    want = attachment(
        [{"field": "status", "op": "eq", "value": "done"}], {"team": {"tags": ["eu"]}}
    )
    have = attachment(
        [{"field": "status", "op": "eq", "value": "failed"}], {"team": {"tags": ["us"]}}
    )
    assert ATTACHMENTS.diff_field(
        "metadataFilter", want.metadataFilter, have.metadataFilter, NO_CONTEXT
    ) == FieldChange(
        field="metadataFilter", before={"team": {"tags": ["us"]}}, after={"team": {"tags": ["eu"]}}
    )
    change = ATTACHMENTS.diff_field(
        "fieldFilters", want.fieldFilters, have.fieldFilters, NO_CONTEXT
    )
    assert change is not None
    assert change.added == ({"field": "status", "op": "eq", "value": "done"},)
    assert change.removed == ({"field": "status", "op": "eq", "value": "failed"},)


def test_header_digests_are_compared_key_by_key_and_never_shown() -> None:
    want = WebhookState(name="w", headers={"X-A": "sha256:1", "X-B": "sha256:2", "X-N": "sha256:5"})
    have = WebhookState(name="w", headers={"X-A": "sha256:1", "X-B": "sha256:9", "X-C": "sha256:3"})
    change = WEBHOOKS.diff_field("headers", want.headers, have.headers, NO_CONTEXT)
    assert change == FieldChange(
        field="headers",
        sensitive=True,
        keys={"X-A": "unchanged", "X-B": "changed", "X-C": "removed", "X-N": "added"},
    )
    assert "sha256" not in change.model_dump_json()
    same = dict(reversed(list(want.headers.items())))
    assert WEBHOOKS.diff_field("headers", want.headers, same, NO_CONTEXT) is None
