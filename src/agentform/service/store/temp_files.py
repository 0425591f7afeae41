"""Staged files (docs/service/contract.md#staged-files, `POST /temp-files`): what an
execution request's `tempFiles` name.

A staged file belongs to the organization that uploaded it; only that
organization's execute requests may name it (the execute rules ask
`staged_file_name`). Its bytes are kept in the database with it.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentform.service.store.database import Conn, new_id

MAX_FILE_BYTES = 25 * 1024 * 1024
"""At most 25 MiB a file (docs/service/contract.md#staged-files, #limits)."""


@dataclass(frozen=True)
class StagedFile:
    id: str
    name: str
    size: int


def stage_file(conn: Conn, org_id: str, name: str, content: bytes) -> StagedFile:
    file_id = new_id()
    conn.execute(
        "INSERT INTO temp_files (id, organization_id, name, size, content, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (file_id, org_id, name, len(content), content, conn.now_iso()),
    )
    return StagedFile(file_id, name, len(content))


def staged_file_name(conn: Conn, org_id: str, file_id: str) -> str | None:
    """The name this organization staged the file under, else None (also for another's file)."""
    row = conn.execute(
        "SELECT name FROM temp_files WHERE id = ? AND organization_id = ?", (file_id, org_id)
    ).fetchone()
    return None if row is None else str(row["name"])
