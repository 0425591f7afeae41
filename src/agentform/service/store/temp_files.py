"""Staged files (docs/service/contract.md#staged-files, `POST /temp-files`): what an
execution request's `tempFiles` name.

A staged file belongs to the organization that uploaded it; only that
organization's execute requests may name it (the execute rules ask
`staged_file_name`). Its bytes are kept in the database with it, copied in
chunks from the file the upload was spooled to (SQLite's incremental blob
I/O), so a 20-file upload of 24 MiB each never sits in memory; and the bytes an
organization keeps are bounded by its quota (docs/service/limits.md#uploads).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO

from agentform.service.errors import ServiceError
from agentform.service.store.database import Conn, new_id

MAX_FILE_BYTES = 25 * 1024 * 1024
"""At most 25 MiB a file (docs/service/contract.md#staged-files, #limits)."""
CHUNK_BYTES = 1024 * 1024


@dataclass(frozen=True)
class StagedFile:
    id: str
    name: str
    size: int


@dataclass(frozen=True)
class Upload:
    """A file as received: its name, its size, and where its bytes can be read."""

    name: str
    size: int
    content: BinaryIO


def stored_bytes(conn: Conn, org_id: str) -> int:
    """The bytes of the files this organization has staged."""
    row = conn.execute(
        "SELECT COALESCE(SUM(size), 0) FROM temp_files WHERE organization_id = ?", (org_id,)
    ).fetchone()
    return int(row[0])


def stage_files(conn: Conn, org_id: str, uploads: list[Upload], quota: int) -> list[StagedFile]:
    """Stages every upload, or none (413) when they would take the organization past
    `quota` bytes; call inside one write transaction."""
    total, used = sum(u.size for u in uploads), stored_bytes(conn, org_id)
    if used + total > quota:
        raise ServiceError(
            413,
            f"these files ({total:,} bytes) would take the organization's staged files "
            f"past its quota of {quota:,} bytes ({used:,} in use)",
        )
    return [stage_file(conn, org_id, upload) for upload in uploads]


def stage_file(conn: Conn, org_id: str, upload: Upload) -> StagedFile:
    file_id = new_id()
    cursor = conn.execute(
        "INSERT INTO temp_files (id, organization_id, name, size, content, created_at) "
        "VALUES (?, ?, ?, ?, zeroblob(?), ?)",
        (file_id, org_id, upload.name, upload.size, upload.size, conn.now_iso()),
    )
    if upload.size:
        upload.content.seek(0)
        assert cursor.lastrowid is not None  # an INSERT into a rowid table has one
        with conn.blobopen("temp_files", "content", cursor.lastrowid) as blob:
            while chunk := upload.content.read(min(CHUNK_BYTES, upload.size - blob.tell())):
                blob.write(chunk)
    return StagedFile(file_id, upload.name, upload.size)


def staged_file_name(conn: Conn, org_id: str, file_id: str) -> str | None:
    """The name this organization staged the file under, else None (also for another's file)."""
    row = conn.execute(
        "SELECT name FROM temp_files WHERE id = ? AND organization_id = ?", (file_id, org_id)
    ).fetchone()
    return None if row is None else str(row["name"])
