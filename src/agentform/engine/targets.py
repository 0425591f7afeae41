"""Partial plans: `--target KIND/KEY` and `--exclude KIND/KEY` (globs, repeatable).

A target keeps the changes whose address it matches, the changes of their children
(a webhook's attachments), and, transitively, the changes they depend on (an
attachment's integration or a batch's pool being created), each marked in its
reason as pulled in. An exclude drops the changes it matches and every change that
depends on one of them. The plan says it is partial, as Terraform does, in a warning
that every view puts first.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable

from ..errors import AgentformError
from ..kinds import Kind
from ..rules.problems import did_you_mean
from ..words import counted
from .model import Change, Plan, PlanWarning, summarise

PARTIAL = "this plan is partial"


def check_patterns(patterns: Iterable[str]) -> list[str]:
    """The patterns as `KIND/KEY` globs (`KIND` alone is `KIND/*`); an unknown kind
    is an error naming the kinds (with a did-you-mean)."""
    out = []
    for pattern in patterns:
        kind, slash, _ = pattern.partition("/")
        if not any(fnmatch.fnmatchcase(name, kind) for name in Kind.registry):
            hint = did_you_mean(kind, Kind.registry)
            raise AgentformError(
                f"--target/--exclude {pattern!r}: no kind {kind!r}{hint}; "
                f"kinds: {', '.join(sorted(Kind.registry))}"
            )
        out.append(pattern if slash else f"{pattern}/*")
    return out


def _matches(change: Change, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(change.id, p) for p in patterns)


def select(plan: Plan, targets: Iterable[str], excludes: Iterable[str]) -> Plan:
    """The plan reduced to its targets (all of it when none) minus its excludes."""
    targets, excludes = check_patterns(targets), check_patterns(excludes)
    if not targets and not excludes:
        return plan
    by_id = {c.id: c for c in plan.changes}
    why: dict[str, str] = {}  # pulled-in change -> what needs it
    if targets:
        chosen = {c.id for c in plan.changes if _matches(c, targets)}
        chosen |= {c.id for c in plan.changes if c.parent in chosen}
        todo = sorted(chosen)
        while todo:
            change = by_id[todo.pop()]
            for dep in change.dependsOn:
                if dep not in chosen:
                    chosen.add(dep)
                    why[dep] = change.id
                    todo.append(dep)
    else:
        chosen = set(by_id)
    dropped = {c.id for c in plan.changes if _matches(c, excludes)}
    grew = True
    while grew:  # what depends on a dropped change cannot run without it
        more = {c.id for c in plan.changes if c.id in chosen and set(c.dependsOn) & dropped}
        grew = bool(more - dropped)
        dropped |= more
    kept = tuple(
        c.model_copy(update={"reason": f"{c.reason}; pulled in: {why[c.id]} needs it"})
        if c.id in why
        else c
        for c in plan.changes
        if c.id in chosen and c.id not in dropped
    )
    warnings = [_partial_warning(targets, excludes, len(plan.changes) - len(kept))]
    for pattern in targets:
        if not any(fnmatch.fnmatchcase(c.id, pattern) for c in plan.changes):
            warnings.append(PlanWarning(message=f"--target {pattern} matches no change"))
    blocked = sorted(i for i in dropped if i in chosen and not _matches(by_id[i], excludes))
    if blocked:
        warnings.append(
            PlanWarning(
                message=f"left out because they need an excluded change: {', '.join(blocked)}"
            )
        )
    return plan.model_copy(
        update={
            "changes": kept,
            "cannotApply": tuple(
                c
                for c in plan.cannotApply
                if (not targets or _matches(c, targets)) and not _matches(c, excludes)
            ),
            "warnings": (*warnings, *plan.warnings),
            "summary": summarise(
                kept, unchanged=plan.summary.unchanged, unmanaged=plan.summary.unmanaged
            ),
            "fingerprints": {c.id: plan.fingerprints[c.id] for c in kept},
            "targets": tuple(targets),
            "excludes": tuple(excludes),
        }
    )


def _partial_warning(targets: list[str], excludes: list[str], left_out: int) -> PlanWarning:
    given = " ".join([*(f"--target {t}" for t in targets), *(f"--exclude {e}" for e in excludes)])
    return PlanWarning(
        message=(
            f"{PARTIAL} ({given}): {counted(left_out, 'other change', 'were left out')}, so the "
            "service may still differ from the files after apply; a plan without --target "
            "and --exclude shows everything"
        )
    )
