"""How values and changes of values are written in plans."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from deepdiff import DeepDiff

from ..kinds.base import FieldChange


def value(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False)


SHOWN_ENTRIES = 3  # a long list of objects shows its count, digest and first entries


def summarised(entries: list[Any] | tuple[Any, ...], verbose: bool) -> tuple[str, list[Any]]:
    """(a heading, the entries to show) for a list of objects: all of a short list,
    or with -v; else the count, a digest of the whole list and the first few."""
    if verbose or len(entries) <= 2 * SHOWN_ENTRIES:
        return "", list(entries)
    canonical = json.dumps(entries, sort_keys=True, separators=(",", ":"))
    digest = hashlib.sha256(canonical.encode()).hexdigest()[:16]
    heading = (
        f" {len(entries)} entries, digest sha256:{digest}, first {SHOWN_ENTRIES} "
        "shown (-v shows all)"
    )
    return heading, list(entries[:SHOWN_ENTRIES])


def _path(field: str, deep_path: str) -> str:
    # DeepDiff writes root[1]['required']; plans write fields[1].required
    path = re.sub(r"\['([^']*)'\]", r".\1", deep_path.removeprefix("root"))
    return field + path


def describe(change: FieldChange) -> list[str]:
    """One or more lines saying how a field changes."""
    if change.sensitive:
        if change.keys is None:
            return [f"{change.field}: (sensitive, changed)"]
        shown = {
            "added": "+ {f}.{k}: (sensitive)",
            "removed": "- {f}.{k}: (sensitive)",
            "changed": "{f}.{k}: (sensitive, changed)",
            "unchanged": "{f}.{k}: (sensitive, unchanged)",
        }
        return [shown[s].format(f=change.field, k=k) for k, s in change.keys.items()]
    if change.added is not None or change.removed is not None:
        parts = [f"+{_item(x)}" for x in change.added or []]
        parts += [f"-{_item(x)}" for x in change.removed or []]
        return [f"{change.field}: {' '.join(parts)}"]
    before, after = change.before, change.after
    if isinstance(before, list | tuple | dict) and isinstance(after, list | tuple | dict):
        return _list_lines(change.field, before, after)
    return [f"{change.field}: {value(before)} -> {value(after)}"]


def _item(entry: Any) -> str:
    return entry if isinstance(entry, str) else value(entry)


def _list_lines(field: str, before: Any, after: Any) -> list[str]:
    diff = DeepDiff(before, after, verbose_level=2)
    lines = []
    for path, d in diff.get("values_changed", {}).items():
        lines.append(f"{_path(field, path)}: {value(d['old_value'])} -> {value(d['new_value'])}")
    for path, d in diff.get("type_changes", {}).items():
        lines.append(f"{_path(field, path)}: {value(d['old_value'])} -> {value(d['new_value'])}")
    for key, sign in (
        ("dictionary_item_added", "+"),
        ("iterable_item_added", "+"),
        ("dictionary_item_removed", "-"),
        ("iterable_item_removed", "-"),
    ):
        for path, v in diff.get(key, {}).items():
            lines.append(f"{sign} {_path(field, path)}: {value(v)}")
    return sorted(lines) or [f"{field}: {value(before)} -> {value(after)}"]
