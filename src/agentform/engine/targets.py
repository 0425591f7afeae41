"""Partial plans: `--target KIND/KEY` and `--exclude KIND/KEY` (globs, repeatable).

A target keeps the changes whose address it matches, the changes of their children
(a webhook's attachments), and, transitively, the changes they depend on (an
attachment's integration or a batch's pool being created), each marked in its
reason as pulled in. An exclude drops the changes it matches and every change that
depends on one of them. Warnings about objects left out are left out too (those about
no object stay). The plan says it is partial, as Terraform does, in a warning
that every view puts first.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable

from agentform.core.errors import AgentformError
from agentform.core.problems import did_you_mean
from agentform.core.words import counted
from agentform.engine.model import Change, Plan, PlanWarning, summarise
from agentform.kinds import Kind

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
    return _hit(change.id, patterns)


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
    selected = _Selection(plan, kept, targets, excludes)
    return plan.model_copy(
        update={
            "changes": kept,
            "cannotApply": tuple(c for c in plan.cannotApply if selected(c.id)),
            "warnings": (*warnings, *(w for w in plan.warnings if selected(w.address))),
            "summary": summarise(
                kept, unchanged=plan.summary.unchanged, unmanaged=plan.summary.unmanaged
            ),
            "fingerprints": {c.id: plan.fingerprints[c.id] for c in kept},
            "targets": tuple(targets),
            "excludes": tuple(excludes),
        }
    )


class _Selection:
    """Whether an object is in the partial plan, by its address: a planned change's
    object when its change was kept; another (one the plan cannot change, or one a
    warning is about) when a target matches it or its parent and no exclude matches
    it. What has no address (a warning about the whole workspace) always is."""

    def __init__(
        self, plan: Plan, kept: Iterable[Change], targets: list[str], excludes: list[str]
    ) -> None:
        self.planned = {c.id for c in plan.changes}
        self.kept = {c.id for c in kept}
        self.parents = {c.id: c.parent for c in (*plan.changes, *plan.cannotApply) if c.parent}
        self.targets, self.excludes = targets, excludes

    def __call__(self, object_address: str | None) -> bool:
        if object_address is None:
            return True
        if object_address in self.planned:
            return object_address in self.kept
        named = [a for a in (object_address, self.parents.get(object_address)) if a]
        targeted = not self.targets or any(_hit(a, self.targets) for a in named)
        return targeted and not _hit(object_address, self.excludes)


def _hit(object_address: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(object_address, p) for p in patterns)


def _partial_warning(targets: list[str], excludes: list[str], left_out: int) -> PlanWarning:
    given = " ".join([*(f"--target {t}" for t in targets), *(f"--exclude {e}" for e in excludes)])
    return PlanWarning(
        message=(
            f"{PARTIAL} ({given}): {counted(left_out, 'other change', 'were left out')}, so the "
            "service may still differ from the files after apply; a plan without --target "
            "and --exclude shows everything"
        )
    )
