"""How values and changes of values are written in plans."""

from __future__ import annotations

import json
import re
from typing import Any

from deepdiff import DeepDiff

from ..kinds.base import FieldChange


def value(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False)


def _path(field: str, deep_path: str) -> str:
    # DeepDiff writes root[1]['required']; plans write fields[1].required
    path = re.sub(r"\['([^']*)'\]", r".\1", deep_path.removeprefix("root"))
    return field + path


def describe(change: FieldChange) -> list[str]:
    """One or more lines saying how a field changes."""
    if change.sensitive:
        return [f"{change.field}: (sensitive, changed)"]
    if change.added is not None or change.removed is not None:
        parts = [f"+{x}" for x in change.added or []] + [f"-{x}" for x in change.removed or []]
        return [f"{change.field}: {' '.join(parts)}"]
    before, after = change.before, change.after
    if isinstance(before, list) and isinstance(after, list):
        return _list_lines(change.field, before, after)
    return [f"{change.field}: {value(before)} -> {value(after)}"]


def _list_lines(field: str, before: list[Any], after: list[Any]) -> list[str]:
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
