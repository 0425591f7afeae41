"""How values and changes of values are written in every view.

A field change becomes a list of `Edit`s (what was added, removed, changed or is
sensitive, at which path). Ordered lists (template fields and steps) are aligned
with difflib on their canonical JSON, so inserting one item at the top is one
added item, not a change on every later index; deleted items show what they held.
Maps are compared key by key. The text and markdown views render the same edits.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Any, Literal

from agentform.core.sensitive import MASK, Sensitive, contains_sensitive, masked
from agentform.core.words import counted
from agentform.engine.model import Plan, renames
from agentform.kinds.model import FieldChange

if TYPE_CHECKING:  # the apply engine imports httpx: offline views must not
    from agentform.engine.apply import ApplyReport

SENSITIVE_CHANGED = "(sensitive, changed)"
SENSITIVE_KEYS = {
    "added": ("add", "(sensitive)"),
    "removed": ("remove", "(sensitive)"),
    "changed": ("sensitive", SENSITIVE_CHANGED),
    "unchanged": ("same", "(sensitive, unchanged)"),
}


def value(v: Any) -> str:
    """A value as JSON, every sensitive value in it masked."""
    if isinstance(v, Sensitive):
        return MASK
    return json.dumps(v, ensure_ascii=False, default=masked)


def _item_text(entry: Any) -> str:
    return entry if isinstance(entry, str) else value(entry)


def warning_text(warning: Any) -> str:
    """A plan warning as one line: `ADDRESS: message (file:line:col)`."""
    about = f"{warning.address}: " if warning.address else ""
    where = f" ({warning.position})" if warning.position else ""
    return f"{about}{warning.message}{where}"


SHOWN_ENTRIES = 3  # a long list of objects shows its count, digest and first entries


def summarised(entries: list[Any] | tuple[Any, ...], verbose: bool) -> tuple[str, list[Any]]:
    """(a heading, the entries to show) for a list of objects: all of a short list,
    or with -v; else the count, a digest of the whole list and the first few."""
    if verbose or len(entries) <= 2 * SHOWN_ENTRIES:
        return "", list(entries)
    canonical = json.dumps(entries, sort_keys=True, separators=(",", ":"), default=masked)
    digest = hashlib.sha256(canonical.encode()).hexdigest()[:16]
    heading = (
        f" {len(entries)} entries, digest sha256:{digest}, first {SHOWN_ENTRIES} "
        "shown (-v shows all)"
    )
    return heading, list(entries[:SHOWN_ENTRIES])


@dataclass(frozen=True)
class Edit:
    """One line's worth of a change. `note` replaces the values of a sensitive one."""

    op: Literal["add", "remove", "change", "sensitive", "same"]
    path: str
    before: Any = None
    after: Any = None
    note: str = ""


def edits(change: FieldChange) -> list[Edit]:
    """The edits of one field change, in reading order; a value that holds a
    sensitive one is never shown (a set shows its elements, masked one by one)."""
    is_set = change.added is not None or change.removed is not None
    if change.sensitive or (not is_set and contains_sensitive([change.before, change.after])):
        if change.keys is None:
            return [Edit("sensitive", change.field, note=SENSITIVE_CHANGED)]
        out = []
        for key, status in change.keys.items():
            op, note = SENSITIVE_KEYS[status]
            out.append(Edit(op, f"{change.field}.{key}", note=note))  # type: ignore[arg-type]
        return out
    if change.added is not None or change.removed is not None:
        return [Edit("add", change.field, after=x) for x in change.added or ()] + [
            Edit("remove", change.field, before=x) for x in change.removed or ()
        ]
    before, after = change.before, change.after
    if isinstance(before, list | tuple) and isinstance(after, list | tuple):
        return _aligned(change.field, list(before), list(after))
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        return _item(change.field, before, after)
    return [Edit("change", change.field, before, after)]


def _canonical(item: Any) -> str:
    return json.dumps(item, sort_keys=True, default=str)


def _aligned(path: str, before: list[Any], after: list[Any]) -> list[Edit]:
    matcher = SequenceMatcher(
        a=[_canonical(x) for x in before], b=[_canonical(x) for x in after], autojunk=False
    )
    out: list[Edit] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            out += _paired(path, before, after, (i1, i2), (j1, j2))
    return out


PAIRING_LIMIT = 10_000  # items compared pairwise in one replaced block, at most


def _similarity(a: Any, b: Any) -> float:
    if isinstance(a, Mapping) and isinstance(b, Mapping) and (a or b):
        same: int = sum(k in b and a[k] == b[k] for k in a)
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
    """A value changed in place: key by key when both sides are mappings."""
    if not (isinstance(before, Mapping) and isinstance(after, Mapping)):
        if isinstance(before, list | tuple) and isinstance(after, list | tuple):
            return _aligned(path, list(before), list(after))
        return [Edit("change", path, before, after)]
    out = []
    for key in [*before, *(k for k in after if k not in before)]:
        if key not in after:
            out.append(Edit("remove", f"{path}.{key}", before=before[key]))
        elif key not in before:
            out.append(Edit("add", f"{path}.{key}", after=after[key]))
        elif before[key] != after[key]:
            out += _item(f"{path}.{key}", before[key], after[key])
    return out


def describe(change: FieldChange) -> list[str]:
    """One or more lines saying how a field changes (the text view)."""
    all_edits = edits(change)
    if not change.sensitive and (change.added is not None or change.removed is not None):
        parts = [f"+{_item_text(e.after)}" for e in all_edits if e.op == "add"]
        parts += [f"-{_item_text(e.before)}" for e in all_edits if e.op == "remove"]
        return [f"{change.field}: {' '.join(parts)}"]
    lines = []
    for e in all_edits:
        if e.note:
            sign = {"add": "+ ", "remove": "- "}.get(e.op, "")
            lines.append(f"{sign}{e.path}: {e.note}")
        elif e.op == "change":
            lines.append(f"{e.path}: {value(e.before)} -> {value(e.after)}")
        elif e.op == "add":
            lines.append(f"+ {e.path}: {value(e.after)}")
        else:
            lines.append(f"- {e.path}: {value(e.before)}")
    return lines or [f"{change.field}: {value(change.before)} -> {value(change.after)}"]


def diff_lines(change: FieldChange, indent: str = "    ") -> list[str]:
    """The edits of a field change as lines of a `diff` block: `-` old, `+` new, `~` a
    sensitive change (no value shown), a space for a sensitive key left as it is."""
    out = []
    for e in edits(change):
        if e.note:
            sign = {"add": "+", "remove": "-", "same": " "}.get(e.op, "~")
            out.append(f"{sign}{indent}{e.path}: {e.note}")
            continue
        if e.op in ("remove", "change"):
            out.append(f"-{indent}{e.path}: {_shown(e.before, change)}")
        if e.op in ("add", "change"):
            out.append(f"+{indent}{e.path}: {_shown(e.after, change)}")
    return out


def _shown(v: Any, change: FieldChange) -> str:
    set_member = change.added is not None or change.removed is not None
    return _item_text(v) if set_member else value(v)


def object_lines(
    sign: str, shown: Mapping[str, Any] | None, indent: str = "    ", verbose: bool = False
) -> list[str]:
    """A whole object (created or deleted) as `diff` lines, one per field or list item
    (a long list of objects summarised unless `verbose`)."""
    out = []
    for k, v in (shown or {}).items():
        if k == "name":
            continue
        if isinstance(v, list | tuple) and any(isinstance(i, Mapping) for i in v):
            head, entries = summarised(v, verbose)
            if head:
                out.append(f"{sign}{indent}{k}:{head}")
            out += [f"{sign}{indent}{k}[{i}]: {value(item)}" for i, item in enumerate(entries)]
        else:
            out.append(f"{sign}{indent}{k}: {value(v)}")
    return out


def known_after_create(change: Any) -> list[str]:
    """The objects whose ids this change's calls take once their creates have answered."""
    pending = {s.idOf for call in change.calls for s in call.slots if s.idOf} - {change.id}
    return [f"{ref} id: (known after create)" for ref in sorted(pending)]


def report_counts(report: ApplyReport) -> str:
    """The apply report's summary line (text and markdown), saying when it was interrupted."""
    in_place = report.count("already in place")
    return (
        ("Apply interrupted: " if report.interrupted else "Apply: ")
        + f"{report.count('succeeded')} succeeded, "
        + (f"{in_place} already in place, " if in_place else "")
        + f"{report.count('failed')} failed, {report.count('not attempted')} not attempted."
    )


def plan_summary(plan: Plan) -> tuple[str, str]:
    """A plan's last line, as (its bold head, the rest), for every view. It claims a
    match only when there is one: not while objects differ where nothing can be
    applied (`Plan.cannotApply`), and for a partial plan only of the part planned."""
    s = plan.summary
    tail = f"({s.unchanged} unchanged, {s.unmanaged} not managed)"
    n = len(plan.cannotApply)
    stuck = "from the files where nothing can be applied (see warnings)"
    if plan.has_changes:
        renamed = renames(plan.changes)
        updates = f"{s.update} to update" + (f" ({renamed} to rename)" if renamed else "")
        counts = f"Plan: {s.create} to create, {updates}, {s.delete} to delete"
        counts += f", {s.replace} to replace" if s.replace else ""
        counts += f", {s.cancel} to cancel" if s.cancel else ""
        return counts + ".", f" {tail}" + (
            f"; {counted(n, 'more object', 'differ')} {stuck}." if n else ""
        )
    if n:
        return "No changes to apply;", f" {counted(n, 'object', 'differ')} {stuck} {tail}."
    if plan.targets:
        return "No changes.", f" The targeted part of the live workspace matches the files {tail}."
    if plan.excludes:
        return "No changes.", (
            f" The live workspace, but for what was excluded, matches the files {tail}."
        )
    return "No changes.", f" The live workspace matches the files {tail}."
