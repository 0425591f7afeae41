"""Items of a batch: each an execute request (the shared rules of `rules/execute.py`)
that may name its profile or pool by name; written in the YAML (Jinja2 loops
welcome) or loaded from a CSV or JSON file beside it (`itemsFile:`, read by
`items_file.py`).

At plan time names become ids (a pool this plan creates gives an id known after
create), every item is checked by the execute rules against the agent and the
organization, and the items become the requests the service keeps, so a pending
batch compares item by item with what `/items` answers.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from pydantic import ConfigDict, Field

from agentform.core.diagnostics import Position
from agentform.core.frozen import FrozenDict
from agentform.core.model_data import model_data
from agentform.core.problems import Problem, RuleViolation
from agentform.kinds.context import PlanContext
from agentform.kinds.model import Declared
from agentform.kinds.slots import SENTINEL
from agentform.rules.batches import CachedLookup, check_items, item_prefix, parse_items
from agentform.rules.execute import (
    AgentVersions,
    ExecuteRequest,
    check_execute_request,
    parse_execute_request,
)

REFERENCE_FIELDS = {"agentProfile": "agentProfileId", "agentProfilePool": "agentProfilePoolId"}
ITEM = re.compile(r"items\[(\d+)\]")
SHOWN_PROBLEMS = 10  # item problems reported one by one; the rest are counted


class BatchItem(ExecuteRequest):
    """One item: an execute request (docs/service/contract.md#execute-request), its
    profile or pool also by name."""

    model_config = ConfigDict(extra="forbid", strict=True, title="BatchItem", defer_build=True)
    agentProfile: str | None = Field(None, description="The agent profile, by name (or id)")
    agentProfilePool: str | None = Field(None, description="The profile pool, by name (or id)")


# -- resolution ----------------------------------------------------------------


class _Organization:
    """The execute rules' view of the organization at plan time: live profiles and
    pools, and the pools this plan creates (PENDING stands for their ids)."""

    def __init__(self, ctx: PlanContext) -> None:
        self.ctx = ctx

    def profile_exists(self, profile_id: str) -> bool:
        return profile_id in self.ctx.references["profiles"].by_id

    def pool_exists(self, pool_id: str) -> bool:
        return pool_id == PENDING or self.ctx.resolve("profilePools", pool_id) is not None

    def staged_file_name(self, file_id: str) -> str | None:
        return None  # files staged for one run do not belong in a workspace


PENDING = str(uuid.UUID(int=0))  # stands for an id known after create while rules run


def agent_versions(ctx: PlanContext, agent_id: str) -> AgentVersions | None:
    agent = ctx.references["agents"].items.get(agent_id, {})
    if "versions" not in agent:
        return None
    return AgentVersions(agent["versions"], agent.get("publishedVersion", 0))


def resolve_items(
    items: list[BatchItem],
    agent_id: str | None,
    ctx: PlanContext,
    label: str,
    declared: Declared,
) -> tuple[FrozenDict, ...] | None:
    """The items as the requests the service keeps (ids for names, in the shape the
    batch rules give them); None when any item has a problem (each reported where
    its item is written, the first ones in full). With no agent (its name is
    unknown) only the names the items give are checked."""
    requests: list[dict[str, Any]] = []
    pending: dict[tuple[int, str], str] = {}  # (item, field) -> id known after create
    problems: list[str] = []
    for index, item in enumerate(items):
        request = model_data(item, exclude_unset=True)
        for field, id_field in REFERENCE_FIELDS.items():
            ref = request.pop(field, None)
            if ref is None:
                continue
            if id_field in request:
                problems.append(f"{item_prefix(index)}: give {field} or {id_field}, not both")
                continue
            found, why = _resolve(field, ref, ctx)
            if found is None:
                problems.append(f"{item_prefix(index)}.{field}: {why}")
            elif SENTINEL.fullmatch(found):
                pending[(index, id_field)] = found
                request[id_field] = PENDING
            else:
                request[id_field] = found
        requests.append(request)
    if not problems and agent_id is not None:  # the execute rules need the agent
        named = {
            (i, f) for i, item in enumerate(items) for f in REFERENCE_FIELDS if getattr(item, f)
        }
        problems = [_as_written(p, named) for p in _rule_problems(requests, agent_id, ctx)]
    if problems:
        for problem in problems[:SHOWN_PROBLEMS]:
            ctx.diagnostics.error(f"{label}: {problem}", _where(problem, declared))
        if len(problems) > SHOWN_PROBLEMS:
            more = len(problems) - SHOWN_PROBLEMS
            ctx.diagnostics.error(f"{label}: {more} more problems in items", declared.position)
        return None
    if agent_id is None:
        return None  # their names are right; the rest needs the agent
    out = []
    for index, parsed in enumerate(parse_items(requests)):
        sent = parsed.as_sent()  # the form the service keeps, so /items compares equal
        for (at, field), sentinel in pending.items():
            if at == index:
                sent[field] = sentinel
        out.append(FrozenDict(sent))
    return tuple(out)


def _where(problem: str, declared: Declared) -> Position:
    """Where the item a problem is about was written (in the YAML or its itemsFile)."""
    match = ITEM.match(problem)
    return declared.at("items", int(match.group(1))) if match else declared.position


def _as_written(problem: Problem, named: set[tuple[int, str]]) -> str:
    """A problem in the words of the file: `agentProfilePool` for a pool given by name."""
    match = ITEM.match(problem.parameter)
    parameter, detail = problem.parameter, problem.detail
    if match:
        for field, id_field in REFERENCE_FIELDS.items():
            if (int(match.group(1)), field) in named:
                parameter = re.sub(rf"\b{id_field}\b", field, parameter)
                detail = re.sub(rf"\b{id_field}\b", field, detail)
    return str(Problem(parameter, detail))


def _resolve(field: str, ref: str, ctx: PlanContext) -> tuple[str | None, str]:
    """(an id or None, why there is none)."""
    if field == "agentProfile":
        profiles = ctx.references["profiles"]
        return profiles.resolve(ref), f"no profile named '{ref}'{profiles.suggest(ref)}"
    found = ctx.resolve("profilePools", ref)
    return found, f"no pool named '{ref}'{ctx.suggest('profilePools', ref)}"


def _rule_problems(
    requests: list[dict[str, Any]], agent_id: str, ctx: PlanContext
) -> list[Problem]:
    """The batch rules the service applies: the items' shapes, then the organization
    checks (of every well-shaped item, so all problems show at once)."""
    versions = agent_versions(ctx, agent_id)
    try:
        parsed = parse_items(requests)
    except RuleViolation as exc:
        problems = list(exc.problems)
        shaped = []
        for index, request in enumerate(requests):
            try:
                shaped.append((index, parse_execute_request(request, item_prefix(index))))
            except RuleViolation:
                continue
        lookup = CachedLookup(_Organization(ctx))
        for index, item in shaped:
            agent = versions or _versions_used([item])
            problems += check_execute_request(item, agent, lookup, item_prefix(index))
        return problems
    try:
        check_items(parsed, versions or _versions_used(parsed), _Organization(ctx))
    except RuleViolation as exc:
        return list(exc.problems)
    return []


def _versions_used(items: list[ExecuteRequest]) -> AgentVersions:
    """For an agent listed without its versions: any version is let through here,
    the service checks them."""
    return AgentVersions(sorted({i.version for i in items if i.version is not None}), 0)


def shown_item(request: dict[str, Any], ctx: PlanContext) -> dict[str, Any]:
    """An item as the user writes it: profile and pool by name."""
    out = {k: v for k, v in request.items() if k not in REFERENCE_FIELDS.values()}
    if "agentProfileId" in request:
        out["agentProfile"] = ctx.references["profiles"].name_of(request["agentProfileId"])
    if "agentProfilePoolId" in request:
        out["agentProfilePool"] = ctx.name_of("profilePools", request["agentProfilePoolId"])
    return out
