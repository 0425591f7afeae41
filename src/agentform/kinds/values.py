"""A state's values as a kind compares and shows them: whether a live object holds
what a call asked (`holds`), a value as the user writes it (`plain`), and how a map
of digests of sensitive values changes, key by key, its values never shown."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from agentform.kinds.model import FieldChange, KeyStatus


def holds(asked: Any, found: Any) -> bool:
    """Whether `found` holds everything `asked` says (dicts: their asked keys)."""
    if isinstance(asked, dict):
        return isinstance(found, dict) and all(
            holds(v, found.get(k)) for k, v in asked.items() if v is not None
        )
    if isinstance(asked, list | tuple):
        return (
            isinstance(found, list | tuple)
            and len(asked) == len(found)
            and all(holds(a, f) for a, f in zip(asked, found, strict=True))
        )
    return bool(asked == found)


def plain(value: Any) -> Any:
    """A state value as JSON-like data (lists, dicts, no None fields, sets sorted);
    Sensitive values stay what they are."""
    if isinstance(value, frozenset):
        return sorted((plain(v) for v in value), key=repr)
    if isinstance(value, tuple):
        return [plain(v) for v in value]
    if isinstance(value, BaseModel):
        return {k: plain(v) for k, v in value.model_dump(exclude_none=True).items()}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def sensitive_map_change(
    field: str, want: dict[str, str], have: dict[str, str]
) -> FieldChange | None:
    """A map of digests compared key by key; values are never shown."""
    keys: dict[str, KeyStatus] = {}
    for name in sorted(set(want) | set(have)):
        if name not in have:
            keys[name] = "added"
        elif name not in want:
            keys[name] = "removed"
        else:
            keys[name] = "unchanged" if want[name] == have[name] else "changed"
    if all(status == "unchanged" for status in keys.values()):
        return None
    return FieldChange(field=field, sensitive=True, keys=keys)
