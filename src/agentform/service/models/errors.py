"""The error body every failure answers (docs/service/contract.md#errors): `{code,
message, errors?}`."""

from __future__ import annotations

from pydantic import BaseModel


class ErrorDetail(BaseModel):
    parameter: str
    detail: str


class ErrorBody(BaseModel):
    code: int
    message: str
    errors: list[ErrorDetail] | None = None
