"""Planning: read live state, normalise both sides into one model per kind, diff,
and return a Plan. Deletes only when asked (ensure: absent, prune, a parent's
complete set of children); protect and presets are never deleted.

Kinds are decided in level order, so the creates a kind's objects need (a new
integration for its attachments, a new pool a batch names) are known when it
is decided: their ids become slots, "(known after create)" in the plan. How each
object is decided is engine/deciding.py.
"""

from __future__ import annotations

import dataclasses
import secrets as pysecrets
from typing import Any

from agentform.config.loader import Workspace
from agentform.core.diagnostics import Diagnostics
from agentform.core.gcpause import collector_paused
from agentform.engine.deciding import decide_declared, decide_undeclared
from agentform.engine.decisions import Decisions
from agentform.engine.fingerprint import fingerprint, secret_digest
from agentform.engine.live import LiveState, declares, managed_keys, read_live
from agentform.engine.model import Plan, PlanWarning, recordable, summarise
from agentform.engine.moves import resolve_moves
from agentform.engine.order import stages
from agentform.engine.targets import check_patterns, select
from agentform.kinds import Kind, kinds_in_order
from agentform.kinds.context import PlanContext, PlanOptions
from agentform.kinds.keys import Key
from agentform.kinds.model import Declared
from agentform.kinds.references import References

__all__ = ["LiveState", "diff_plan", "make_plan", "managed_keys", "read_live"]


async def make_plan(
    workspace: Workspace, api: Any, endpoint: str, options: PlanOptions | None = None
) -> Plan:
    options = options or PlanOptions()
    check_patterns([*options.targets, *options.excludes])  # before any call
    live = await read_live(workspace, api)
    plan = diff_plan(workspace, live, endpoint, options)
    return select(plan, options.targets, options.excludes)


def _keyed(
    kind: Kind, declared: list[Declared], refs: References, diags: Diagnostics
) -> list[tuple[Key, Declared]]:
    """Declarations with their canonical keys; two spellings of one key are an error."""
    seen: dict[Key, Declared] = {}
    out = []
    for item in declared:
        key = kind.key_of(item, refs)
        if key in seen:
            diags.error(
                f"{kind.name}: '{key}' is declared twice (first at {seen[key].position})",
                item.position,
            )
            continue
        seen[key] = item
        out.append((key, item))
    return out


def _decide_kind(workspace: Workspace, live: LiveState, kind: Kind, out: Decisions) -> None:
    """Every declared object of `kind`, then every live one the files do not declare."""
    diags = out.ctx.diagnostics
    out.backward.append([])
    existing = live.objects[kind.name]
    keyed = _keyed(kind, workspace.declared[kind.name], live.references, diags)
    for key, item in keyed:
        preset = key in live.presets.get(kind.name, ())
        if not item.present and preset:
            diags.error(  # as a protected object declared absent is (config/protect.py)
                f"{kind.name} {key} is declared absent but is a preset of the service: "
                "presets are never deleted (remove it from the files)",
                item.position,
            )
            continue
        decide_declared(workspace, kind, key, item, existing.get(key), out, preset)
    scopes = managed_keys(workspace, kind, live.references) if kind.parent else set()
    for key in sorted(set(existing) - {k for k, _ in keyed}):
        decide_undeclared(workspace, kind, existing[key], scopes, out)


def _reads(workspace: Workspace, live: LiveState) -> dict[str, tuple[str, ...]]:
    """The keys each kind the files declare was read in depth at: what a saved plan
    reads again (a kind they do not declare is left out, so a new kind changes
    no plan)."""
    return {
        kind: tuple(sorted(str(key) for key in keys))
        for kind, keys in live.reads.items()
        if declares(workspace, Kind.registry[kind])
    }


def diff_plan(
    workspace: Workspace, live: LiveState, endpoint: str, options: PlanOptions | None = None
) -> Plan:
    """The plan of `workspace` against `live`, decided with the cyclic collector paused:
    the decisions make tens of thousands of objects and no cycles, and each full
    collection would scan the workspace and the live state again (a third of the
    diff's time at 10,000 objects). The plan is then frozen out of later collections
    (core/gcpause.py)."""
    with collector_paused(keep=True):
        return _diff(workspace, live, endpoint, options)


def _diff(
    workspace: Workspace, live: LiveState, endpoint: str, options: PlanOptions | None
) -> Plan:
    diags = Diagnostics()
    moves = resolve_moves(workspace.settings.moves, live)
    live = dataclasses.replace(live, objects=moves.objects)
    ctx = PlanContext(live.references, diags, options or PlanOptions(), live.objects)
    out = Decisions(ctx, renamed=moves.renamed, replaced=moves.replaced)
    out.noops += moves.noops
    out.warnings += moves.warnings
    for kind in kinds_in_order():
        _decide_kind(workspace, live, kind, out)
    diags.raise_if_errors()
    loaded = [
        PlanWarning(
            message=w.summary,
            address=w.address,
            position=str(w.position) if w.position else None,
        )
        for w in [*workspace.warnings, *diags.warnings]
    ]
    backward = [c for group in reversed(out.backward) for c in group]
    ordered = tuple(c for stage in stages(out.forward + backward) for c in stage)
    salt = pysecrets.token_hex(8)
    return Plan(
        workspace=workspace.settings.workspace,
        environment=workspace.settings.environment,
        vars=recordable(workspace.variables, workspace.secrets.scrub_shown),
        varOverrides=recordable(workspace.var_overrides, workspace.secrets.scrub_shown),
        endpoint=endpoint,
        organizationId=live.organization_id,
        organizationName=live.organization_name,
        changes=ordered,
        noops=tuple(out.noops),
        cannotApply=tuple(out.cannot_apply),
        unmanaged=out.unmanaged,
        warnings=(*loaded, *out.warnings),
        summary=summarise(
            ordered,
            unchanged=sum(n.reason == "matches live" for n in out.noops),
            unmanaged=sum(out.unmanaged.values()),
        ),
        inputsDigest=workspace.inputs_digest,
        inputDigests=workspace.input_digests,
        fingerprints={c.id: fingerprint(out.read_as[c.id]) for c in ordered},
        reads=_reads(workspace, live),
        secretDigests={
            n: secret_digest(salt, n, v) for n, v in sorted(workspace.secrets.values.items())
        },
        secretSalt=salt,
        allowPastStart=ctx.options.allow_past_start,
        allowCancelRunning=ctx.options.allow_cancel_running,
    )
