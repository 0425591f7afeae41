"""The page envelope every list answers (docs/service/contract.md#lists)."""

from __future__ import annotations

from typing import Generic, TypeVar

from pydantic import BaseModel

T = TypeVar("T")


class Page(BaseModel, Generic[T]):
    items: list[T]
    page: int
    pageSize: int
    total: int
