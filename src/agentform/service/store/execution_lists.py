"""The lists of an organization's executions (docs/service/contract.md#executions):
one page of those matching every filter (the API's list), and the console's newest
first, each filter read in that order from its own index, with their count.
Executions themselves, and row -> model, are store/executions.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from agentform.service.models.executions import Execution
from agentform.service.models.pages import Page
from agentform.service.store.database import Conn
from agentform.service.store.executions import execution_from_row
from agentform.service.store.pages import PageRequest, read_page


@dataclass(frozen=True)
class ExecutionFilter:
    agent_id: str | None = None
    statuses: Sequence[str] = ()
    batch_id: str | None = None
    metadata: tuple[str, str] | None = None
    pool_id: str | None = None
    created_after: str | None = None  # ISO times, as stored: after, exclusive
    created_before: str | None = None  # before, exclusive


def list_executions(
    conn: Conn, org_id: str, where: ExecutionFilter, request: PageRequest
) -> Page[Execution]:
    """One page of the organization's executions matching every filter of `where`."""
    clause, args = _filtered(org_id, where)
    return read_page(conn, "executions", clause, args, request, execution_from_row)


def newest_executions(
    conn: Conn, org_id: str, where: ExecutionFilter, offset: int, limit: int
) -> list[Execution]:
    """The organization's executions matching `where`, newest first, from `offset`:
    what the console lists, each filter read in that order from its own index
    (migration 010), a metadata filter from `execution_metadata`'s."""
    source, args, order = _newest_first(org_id, where)
    rows = conn.execute(
        f"SELECT e.* FROM {source} ORDER BY {order} LIMIT ? OFFSET ?", (*args, limit, offset)
    )
    return [execution_from_row(r) for r in rows]


def count_executions(conn: Conn, org_id: str, where: ExecutionFilter, cap: int) -> int:
    """How many executions match `where`, counted up to `cap` + 1 (more: `cap` + 1)."""
    source, args, _ = _newest_first(org_id, where)
    found: int = conn.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM {source} LIMIT ?)", (*args, cap + 1)
    ).fetchone()[0]
    return found


def _newest_first(org_id: str, where: ExecutionFilter) -> tuple[str, list[Any], str]:
    """FROM and WHERE of the executions matching `where` (as `e`), and their order."""
    if where.metadata is None:
        clause, args = _filtered(org_id, where, "e.")
        return f"executions e WHERE {clause}", args, "e.created_at DESC, e.id DESC"
    clause, args = _filtered(org_id, replace(where, metadata=None), "e.")
    source = (
        "execution_metadata m JOIN executions e ON e.id = m.execution_id "
        f"WHERE m.organization_id = ? AND m.key = ? AND m.value = ? AND {clause}"
    )
    order = "m.created_at DESC, m.execution_id DESC"
    return source, [org_id, *where.metadata, *args], order


def _filtered(org_id: str, where: ExecutionFilter, table: str = "") -> tuple[str, list[Any]]:
    """The WHERE clause of `where` over executions (their columns prefixed `table`)."""
    clauses: list[str] = [f"{table}organization_id = ?"]
    args: list[Any] = [org_id]
    for clause, value in (
        ("agent_id = ?", where.agent_id),
        ("batch_id = ?", where.batch_id),
        ("agent_profile_pool_id = ?", where.pool_id),
        ("created_at > ?", where.created_after),
        ("created_at < ?", where.created_before),
    ):
        if value is not None:
            clauses.append(table + clause)
            args.append(value)
    if where.statuses:
        clauses.append(f"{table}status IN ({','.join('?' * len(where.statuses))})")
        args.extend(where.statuses)
    if where.metadata is not None:  # execution_metadata: a row per key (migration 010)
        clauses.append(
            f"{table}id IN (SELECT execution_id FROM execution_metadata"
            " WHERE organization_id = ? AND key = ? AND value = ?)"
        )
        args.extend((org_id, *where.metadata))
    return " AND ".join(clauses), args
