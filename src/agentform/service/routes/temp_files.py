"""Staged files (docs/service/contract.md#staged-files): `POST /temp-files` takes one or
more multipart parts named `files` (or `file`) and answers 201 `{tempFiles: [{id, name,
size}]}`.

A file over 25 MiB is refused while it streams in, before the body is read in
full; nothing is staged unless every file is accepted. Parts are spooled to
disk as they arrive and copied into the store in chunks (memory stays flat
whatever the upload); files past the organization's quota are a 413.
"""

from __future__ import annotations

import errno
import uuid
from typing import Any

from fastapi import Depends, Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser

from agentform.service.errors import ServiceError, StorageFull, bad_request
from agentform.service.http.auth import Caller, caller, database
from agentform.service.http.gate import api_router
from agentform.service.models.temp_files import TempFile, TempFiles
from agentform.service.settings import ServiceSettings
from agentform.service.store import temp_files as store
from agentform.service.store.database import Database
from agentform.service.store.temp_files import MAX_FILE_BYTES, Upload

router = api_router(tags=["Files"])
PART_NAMES = ("files", "file")
MAX_PARTS = 20
MAX_UPLOAD_BYTES = MAX_PARTS * (MAX_FILE_BYTES + 64 * 1024)
"""The whole body: MAX_PARTS files of at most 25 MiB each, with their part headers."""

_MULTIPART_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "files": {
                            "type": "array",
                            "minItems": 1,
                            "maxItems": 20,
                            "items": {"type": "string", "format": "binary"},
                            "description": "One part per file; at most 20 files in all.",
                        },
                        "file": {
                            "type": "array",
                            "minItems": 1,
                            "maxItems": 20,
                            "items": {"type": "string", "format": "binary"},
                            "description": "Also accepted, alone or beside `files`.",
                        },
                    },
                    "minProperties": 1,
                    "additionalProperties": False,
                }
            }
        },
    }
}


def _bad(parameter: str, detail: str) -> ServiceError:
    return bad_request([(parameter, detail)])


PARTS = "send each file as a multipart/form-data part named files (or file)"


class _FileTooLarge(MultiPartException):
    pass


class _SizeLimitedParser(MultiPartParser):
    """Starlette's multipart parser, stopping as soon as one file passes 25 MiB."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._part_bytes = 0

    def on_part_begin(self) -> None:
        super().on_part_begin()
        self._part_bytes = 0

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        self._part_bytes += end - start
        if self._part_bytes > MAX_FILE_BYTES:
            raise _FileTooLarge("a file is larger than 25 MiB, the most a file may be")
        super().on_part_data(data, start, end)


@router.post(
    "/temp-files",
    status_code=201,
    response_model=TempFiles,
    summary="Stage files for an execution",
    openapi_extra=_MULTIPART_BODY,
    max_body_size=MAX_UPLOAD_BYTES,
)
async def stage_files(
    request: Request,
    organizationId: uuid.UUID | None = Query(None),
    who: Caller = Depends(caller),
    db: Database = Depends(database),
) -> TempFiles:
    """Stages files an execute request can then name in `tempFiles` (as `{id, name}`)."""
    who.check_organization(organizationId)
    return await _staged(request, who, db)


@router.post(
    "/temp-files/{organizationId}",
    status_code=200,
    response_model=TempFiles,
    summary="Stage files for an execution (deprecated: use POST /temp-files)",
    openapi_extra=_MULTIPART_BODY,
    max_body_size=MAX_UPLOAD_BYTES,
    deprecated=True,
)
async def stage_files_of_organization(
    request: Request,
    organizationId: uuid.UUID,
    who: Caller = Depends(caller),
    db: Database = Depends(database),
) -> TempFiles:
    """The public SDK's `temp_files_stage`: the same staging, the organization in the
    path (another one is 403), answering 200 as that operation is documented."""
    who.check_organization(organizationId)
    return await _staged(request, who, db)


async def _staged(request: Request, who: Caller, db: Database) -> TempFiles:
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise _bad("body", f"not multipart/form-data: {PARTS}")
    parser = _SizeLimitedParser(
        request.headers, request.stream(), max_files=MAX_PARTS, max_fields=MAX_PARTS
    )
    try:
        form = await parser.parse()
    except _FileTooLarge as exc:
        raise _bad("files", str(exc)) from None
    except MultiPartException as exc:
        raise _bad("body", f"not valid multipart/form-data ({exc})") from None
    except OSError as exc:  # a part past 1 MiB is spooled to a file on disk first
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise StorageFull() from None
        raise
    settings: ServiceSettings = request.app.state.settings
    quota = settings.temp_files_quota_bytes
    try:
        uploads = _uploads(form.multi_items())
        staged = await run_in_threadpool(_stage, db, who.organization_id, uploads, quota)
    finally:
        await form.close()  # the spooled files go
    return TempFiles(tempFiles=staged)


def _uploads(parts: list[tuple[str, UploadFile | str]]) -> list[Upload]:
    uploads: list[Upload] = []
    for name, value in parts:
        if name not in PART_NAMES:
            raise _bad(name, f"unknown part '{name}': {PARTS}")
        if not isinstance(value, UploadFile) or not value.filename:
            raise _bad(name, "a part must be a file, with a filename")
        value.file.seek(0, 2)  # its size: where the spooled file ends
        uploads.append(Upload(value.filename, value.file.tell(), value.file))
    if not uploads:
        raise _bad("files", f"no file: {PARTS}")
    return uploads


def _stage(db: Database, org_id: str, uploads: list[Upload], quota: int) -> list[TempFile]:
    with db.write() as conn:
        staged = store.stage_files(conn, org_id, uploads, quota)
    return [TempFile(id=f.id, name=f.name, size=f.size) for f in staged]
