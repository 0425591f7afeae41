"""Files executions produce, served through presigned links (EXECUTION_FILE_ADDED's
`presigned_url`): `GET /execution-files/{fileId}?expires=…&signature=…`.

Outside `/agents/v2` and without an API key: the link's signature is the
credential, and it expires (see `executions.file_links`).
"""

from __future__ import annotations

import uuid
from urllib.parse import quote

from fastapi import APIRouter, Depends, Query, Response

from agentform.service.errors import ServiceError
from agentform.service.executions.file_links import FILES_PATH, link_problem
from agentform.service.http.auth import database
from agentform.service.store import execution_files
from agentform.service.store.database import Database

router = APIRouter(tags=["Files"])


@router.get(
    FILES_PATH + "/{fileId}",
    response_class=Response,
    responses={200: {"content": {"application/octet-stream": {}}, "description": "The file"}},
    summary="Download a file an execution produced (presigned link)",
)
def download(
    fileId: uuid.UUID,
    expires: int = Query(..., description="When the link expires (Unix seconds)"),
    signature: str = Query(
        ..., pattern="^[0-9a-f]{64}$", description="The link's signature (64 hex digits)"
    ),
    db: Database = Depends(database),
) -> Response:
    with db.read() as conn:
        secret = execution_files.file_link_secret(conn, make=False)
        problem = link_problem(secret, str(fileId), expires, signature, conn.now())
        if problem:
            raise ServiceError(403, problem)
        found = execution_files.produced_file(conn, str(fileId))
    if found is None:
        raise ServiceError(404, "file not found")
    disposition = f"attachment; filename*=UTF-8''{quote(found.name)}"
    return Response(
        found.content,
        media_type=found.mime_type,
        headers={"Content-Disposition": disposition},
    )
