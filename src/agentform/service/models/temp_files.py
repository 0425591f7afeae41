"""Wire models of an execution's temporary files (docs/service/contract.md#staged-files)."""

from __future__ import annotations

from pydantic import BaseModel


class TempFile(BaseModel):
    id: str
    name: str
    size: int


class TempFiles(BaseModel):
    tempFiles: list[TempFile]
