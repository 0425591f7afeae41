"""Files executions produce (EXECUTION_FILE_ADDED), and the secret their presigned
links are signed with (kept in the database, made on first use)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from agentform.service.store.common import row_as
from agentform.service.store.database import Conn
from agentform.service.store.executions import ExecutionRow


def add_file(
    conn: Conn,
    file_id: str,
    execution: ExecutionRow,
    *,
    name: str,
    mime_type: str,
    source: str,
    content: bytes,
) -> None:
    conn.execute(
        "INSERT OR IGNORE INTO execution_files (id, execution_id, organization_id, name,"
        " mime_type, source, size, content, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            file_id,
            execution.id,
            execution.organization_id,
            name,
            mime_type,
            source,
            len(content),
            content,
            conn.now_iso(),
        ),
    )


@dataclass(frozen=True)
class ProducedFile:
    name: str
    mime_type: str
    content: bytes


def produced_file(conn: Conn, file_id: str) -> ProducedFile | None:
    found = conn.execute(
        "SELECT name, mime_type, content FROM execution_files WHERE id = ?", (file_id,)
    ).fetchone()
    return None if found is None else row_as(ProducedFile, found, content=bytes(found["content"]))


_LINK_SECRET = "file-links"


def file_link_secret(conn: Conn, make: bool = True) -> bytes | None:
    """The secret presigned file links are signed with, made on first use when `make`."""
    if make:
        conn.execute(
            "INSERT OR IGNORE INTO service_secrets (name, value) VALUES (?, ?)",
            (_LINK_SECRET, secrets.token_bytes(32)),
        )
    found = conn.execute(
        "SELECT value FROM service_secrets WHERE name = ?", (_LINK_SECRET,)
    ).fetchone()
    return bytes(found[0]) if found else None
