"""Wire models of an execution's temporary files (API.md §9)."""

from __future__ import annotations

from pydantic import BaseModel


class TempFile(BaseModel):
    id: str
    name: str
    size: int


class TempFiles(BaseModel):
    tempFiles: list[TempFile]
