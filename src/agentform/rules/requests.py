"""What every request to the service may be, on both sides: the service refuses a
larger body with 413 (service/http/gate.py), and `plan` refuses a change whose call
would send one (engine/decisions.py), so a plan that reads well never fails at apply
for its size."""

from __future__ import annotations

import json
from typing import Any

MAX_BODY = 1 << 20
"""Bytes of one request's body (JSON as sent: UTF-8, no spaces)."""


def body_size(body: Any) -> int:
    """The bytes `body` takes as a request's JSON (httpx's encoding: UTF-8, compact);
    a value JSON has no form for (a sensitive one) counts as its text."""
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), default=str)
    return len(text.encode("utf-8"))


def described(limit: int) -> str:
    """`limit` in the words a person reads: 1 MiB, or bytes."""
    return f"{limit >> 20} MiB" if limit % (1 << 20) == 0 else f"{limit:,} bytes"
