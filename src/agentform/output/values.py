"""How values and changes of values are written in every view.

A field change becomes a list of `Edit`s (what was added, removed, changed or is
sensitive, at which path). Ordered lists (template fields and steps) are aligned
with difflib on their canonical JSON, so inserting one item at the top is one
added item, not a change on every later index; deleted items show what they held.
The text and markdown views render the same edits.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, Literal

from ..kinds.base import FieldChange

SENSITIVE_CHANGED = "(sensitive, changed)"


def value(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False)


@dataclass(frozen=True)
class Edit:
    op: Literal["add", "remove", "change", "sensitive"]
    path: str
    before: Any = None
    after: Any = None


def edits(change: FieldChange) -> list[Edit]:
    """The edits of one field change, in reading order."""
    if change.sensitive:
        return [Edit("sensitive", change.field)]
    if change.added is not None or change.removed is not None:
        return [Edit("add", change.field, after=x) for x in change.added or []] + [
            Edit("remove", change.field, before=x) for x in change.removed or []
        ]
    before, after = change.before, change.after
    if isinstance(before, list) and isinstance(after, list):
        return _aligned(change.field, before, after)
    return [Edit("change", change.field, before, after)]


def _canonical(item: Any) -> str:
    return json.dumps(item, sort_keys=True, default=str)


def _aligned(path: str, before: list[Any], after: list[Any]) -> list[Edit]:
    matcher = SequenceMatcher(
        a=[_canonical(x) for x in before], b=[_canonical(x) for x in after], autojunk=False
    )
    out: list[Edit] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        out += _paired(path, before, after, (i1, i2), (j1, j2))
    return out


PAIRING_LIMIT = 10_000  # items compared pairwise in one replaced block, at most


def _similarity(a: Any, b: Any) -> float:
    if isinstance(a, dict) and isinstance(b, dict) and (a or b):
        same = sum(k in b and a[k] == b[k] for k in a)
        return same / max(len(a), len(b))
    return 1.0 if a == b else 0.0


def _paired(
    path: str, before: list[Any], after: list[Any], old: tuple[int, int], new: tuple[int, int]
) -> list[Edit]:
    """A replaced block: items alike enough (most keys equal) are edits in place, as
    difflib's Differ pairs similar lines; the rest are removed and added."""
    (i1, i2), (j1, j2) = old, new
    best, pair = 0.5, None
    if (i2 - i1) * (j2 - j1) <= PAIRING_LIMIT:
        for i in range(i1, i2):
            for j in range(j1, j2):
                score = _similarity(before[i], after[j])
                if score > best:
                    best, pair = score, (i, j)
    if pair is None:
        return [Edit("remove", f"{path}[{i}]", before=before[i]) for i in range(i1, i2)] + [
            Edit("add", f"{path}[{j}]", after=after[j]) for j in range(j1, j2)
        ]
    i, j = pair
    return (
        _paired(path, before, after, (i1, i), (j1, j))
        + _item(f"{path}[{j}]", before[i], after[j])
        + _paired(path, before, after, (i + 1, i2), (j + 1, j2))
    )


def _item(path: str, before: Any, after: Any) -> list[Edit]:
    """An item changed in place: its keys, when both sides are mappings."""
    if not (isinstance(before, dict) and isinstance(after, dict)):
        return [Edit("change", path, before, after)]
    out = []
    for key in [*before, *(k for k in after if k not in before)]:
        if key not in after:
            out.append(Edit("remove", f"{path}.{key}", before=before[key]))
        elif key not in before:
            out.append(Edit("add", f"{path}.{key}", after=after[key]))
        elif before[key] != after[key]:
            out.append(Edit("change", f"{path}.{key}", before[key], after[key]))
    return out


def describe(change: FieldChange) -> list[str]:
    """One or more lines saying how a field changes (the text view)."""
    all_edits = edits(change)
    if change.added is not None or change.removed is not None:
        parts = [f"+{e.after}" for e in all_edits if e.op == "add"]
        parts += [f"-{e.before}" for e in all_edits if e.op == "remove"]
        return [f"{change.field}: {' '.join(parts)}"]
    lines = []
    for e in all_edits:
        if e.op == "sensitive":
            lines.append(f"{e.path}: {SENSITIVE_CHANGED}")
        elif e.op == "change":
            lines.append(f"{e.path}: {value(e.before)} -> {value(e.after)}")
        elif e.op == "add":
            lines.append(f"+ {e.path}: {value(e.after)}")
        else:
            lines.append(f"- {e.path}: {value(e.before)}")
    return lines or [f"{change.field}: {value(change.before)} -> {value(change.after)}"]


def diff_lines(change: FieldChange, indent: str = "    ") -> list[str]:
    """The edits of a field change as lines of a `diff` block: `-` old, `+` new."""
    out = []
    for e in edits(change):
        if e.op == "sensitive":
            out.append(f"~{indent}{e.path}: {SENSITIVE_CHANGED}")
            continue
        if e.op in ("remove", "change"):
            out.append(f"-{indent}{e.path}: {value(e.before)}")
        if e.op in ("add", "change"):
            out.append(f"+{indent}{e.path}: {value(e.after)}")
    return out


def object_lines(sign: str, shown: dict[str, Any] | None, indent: str = "    ") -> list[str]:
    """A whole object (created or deleted) as `diff` lines, one per field or list item."""
    out = []
    for k, v in (shown or {}).items():
        if k == "name":
            continue
        if isinstance(v, list) and any(isinstance(i, dict) for i in v):
            out += [f"{sign}{indent}{k}[{i}]: {value(item)}" for i, item in enumerate(v)]
        else:
            out.append(f"{sign}{indent}{k}: {value(v)}")
    return out
