"""Items of a batch: each an execute request (the shared rules of `rules/execute.py`)
that may name its profile or pool by name; written in the YAML (Jinja2 loops
welcome) or loaded from a CSV or JSON file beside it (`itemsFile:`).

At plan time names become ids (a pool this plan creates gives an id known after
create), every item is checked by the execute rules against the agent and the
organization, and the items become the requests the service keeps, so a pending
batch compares item by item with what `/items` answers.
"""

from __future__ import annotations

import csv
import io
import json
import uuid
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, ValidationError

from ..config.diagnostics import Diagnostics, Position
from ..frozen import FrozenDict
from ..rules.execute import (
    AgentVersions,
    ExecuteRequest,
    check_execute_request,
    parse_execute_request,
)
from ..rules.problems import RuleViolation, problems_from
from .context import PlanContext
from .slots import SENTINEL

REFERENCE_FIELDS = {"agentProfile": "agentProfileId", "agentProfilePool": "agentProfilePoolId"}
SHOWN_PROBLEMS = 10  # item problems reported one by one; the rest are counted


class BatchItem(ExecuteRequest):
    """One item: an execute request (seed §2.1), its profile or pool also by name."""

    model_config = ConfigDict(extra="forbid", strict=True, title="BatchItem")
    agentProfile: str | None = Field(None, description="The agent profile, by name (or id)")
    agentProfilePool: str | None = Field(None, description="The profile pool, by name (or id)")


# -- items files ---------------------------------------------------------------


def read_items_file(
    path: Path, name: str, position: Position, diagnostics: Diagnostics
) -> tuple[list[BatchItem], bytes] | None:
    """The items of a CSV (a column per input; `metadata.KEY`, `agentProfile`,
    `agentProfilePool`, `version` columns are those fields) or JSON file (a list of
    items as in YAML); None after a diagnostic. `name` is how messages call the file."""
    try:
        content = path.read_bytes()
        text = content.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        diagnostics.error(f"itemsFile {name}: cannot read it ({exc})", position)
        return None
    rows: list[tuple[int, Any]] | None
    if path.suffix.lower() == ".csv":
        rows = _csv_rows(text)
    elif path.suffix.lower() == ".json":
        rows = _json_rows(text, name, position, diagnostics)
        if rows is None:
            return None
    else:
        diagnostics.error(f"itemsFile {name}: must be a .csv or a .json file", position)
        return None
    items = []
    for line, row in rows:
        try:
            items.append(BatchItem.model_validate(row))
        except ValidationError as exc:
            where = Position(name, line, 1) if line else position
            for problem in problems_from(exc):
                diagnostics.error(f"itemsFile item {len(items) + 1}: {problem}", where)
            items.append(BatchItem())
    if not items:
        diagnostics.error(f"itemsFile {name}: has no items", position)
    return items, content


def _csv_rows(text: str) -> list[tuple[int, Any]]:
    reader = csv.DictReader(io.StringIO(text))
    rows = []
    for record in reader:
        item: dict[str, Any] = {}
        for column, cell in record.items():
            if column is None:
                continue
            if column in REFERENCE_FIELDS:
                if cell:
                    item[column] = cell
            elif column == "version":
                if cell:
                    item["version"] = int(cell) if cell.strip().isdigit() else cell
            elif column.startswith("metadata."):
                item.setdefault("metadata", {})[column.removeprefix("metadata.")] = cell
            else:
                item.setdefault("inputs", {})[column.removeprefix("inputs.")] = cell
        rows.append((reader.line_num, item))
    return rows


def _json_rows(
    text: str, name: str, position: Position, diagnostics: Diagnostics
) -> list[tuple[int, Any]] | None:
    try:
        data = json.loads(text)
    except ValueError as exc:
        diagnostics.error(f"itemsFile {name}: not JSON ({exc})", position)
        return None
    if not isinstance(data, list):
        diagnostics.error(f"itemsFile {name}: must hold a list of items", position)
        return None
    return [(0, row) for row in data]


# -- resolution ----------------------------------------------------------------


class _Organization:
    """The execute rules' view of the organization at plan time: live profiles and
    pools, and the pools this plan creates."""

    def __init__(self, ctx: PlanContext, files: dict[str, str]) -> None:
        self.ctx = ctx
        self.files = files

    def profile_exists(self, profile_id: str) -> bool:
        return profile_id in self.ctx.references["profiles"].by_id

    def pool_exists(self, pool_id: str) -> bool:
        return pool_id == PENDING or self.ctx.resolve("profilePools", pool_id) is not None

    def staged_file_name(self, file_id: str) -> str | None:
        return self.files.get(file_id)  # staged files are the service's to check


PENDING = str(uuid.UUID(int=0))  # stands for an id known after create while rules run


def agent_versions(ctx: PlanContext, agent_id: str) -> AgentVersions | None:
    agent = ctx.references["agents"].items.get(agent_id, {})
    if "versions" not in agent:
        return None
    return AgentVersions(agent["versions"], agent.get("publishedVersion", 0))


def resolve_items(
    items: list[BatchItem],
    agent_id: str,
    ctx: PlanContext,
    label: str,
    position: Position,
) -> tuple[FrozenDict, ...] | None:
    """The items as the requests the service keeps (ids for names); None when any
    item has a problem (each reported, the first few in full)."""
    versions = agent_versions(ctx, agent_id)
    problems: list[str] = []
    out = []
    for index, item in enumerate(items):
        request = item.model_dump(mode="json", exclude_unset=True)
        for field, id_field in REFERENCE_FIELDS.items():
            ref = request.pop(field, None)
            if ref is None:
                continue
            if id_field in request:
                problems.append(f"items[{index}]: give {field} or {id_field}, not both")
                continue
            resolved = _resolve(field, ref, ctx)
            if isinstance(resolved, str) and resolved.startswith("!"):
                problems.append(f"items[{index}].{field}: {resolved[1:]}")
            else:
                request[id_field] = resolved
        problems += _rule_problems(request, versions, ctx, index)
        out.append(FrozenDict(request))
    if problems:
        for problem in problems[:SHOWN_PROBLEMS]:
            ctx.diagnostics.error(f"{label}: {problem}", position)
        if len(problems) > SHOWN_PROBLEMS:
            more = len(problems) - SHOWN_PROBLEMS
            ctx.diagnostics.error(f"{label}: {more} more problems in items", position)
        return None
    return tuple(out)


def _resolve(field: str, ref: str, ctx: PlanContext) -> str:
    """An id, or '!' and why there is none."""
    if field == "agentProfile":
        profiles = ctx.references["profiles"]
        found = profiles.resolve(ref)
        return found if found is not None else f"!no profile named '{ref}'{profiles.suggest(ref)}"
    found = ctx.resolve("profilePools", ref)
    if found is None:
        return f"!no pool named '{ref}'{ctx.suggest('profilePools', ref)}"
    return found


def _rule_problems(
    request: dict[str, Any], versions: AgentVersions | None, ctx: PlanContext, index: int
) -> list[str]:
    """The execute rules' problems of one item (ids known after create stand in as
    PENDING, which the organization view accepts)."""
    checked = {
        k: PENDING if isinstance(v, str) and SENTINEL.fullmatch(v) else v
        for k, v in request.items()
    }
    prefix = f"items[{index}]"
    try:
        parsed = parse_execute_request(checked, prefix)
    except RuleViolation as exc:
        return [str(p) for p in exc.problems]
    files = {str(f.id): f.name for f in parsed.tempFiles or []}
    if versions is None:  # an agent read without its versions: the service checks them
        versions = AgentVersions([parsed.version] if parsed.version is not None else [], 0)
    organization = _Organization(ctx, files)
    return [str(p) for p in check_execute_request(parsed, versions, organization, prefix)]


def shown_item(request: dict[str, Any], ctx: PlanContext) -> dict[str, Any]:
    """An item as the user writes it: profile and pool by name."""
    out = {k: v for k, v in request.items() if k not in REFERENCE_FIELDS.values()}
    if "agentProfileId" in request:
        out["agentProfile"] = ctx.references["profiles"].name_of(request["agentProfileId"])
    if "agentProfilePoolId" in request:
        out["agentProfilePool"] = ctx.name_of("profilePools", request["agentProfilePoolId"])
    return out
