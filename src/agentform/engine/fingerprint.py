"""Canonical hashes of live objects (stale-plan detection) and of secret values."""

from __future__ import annotations

import hashlib
import json
from typing import Any

ABSENT = "absent"


def fingerprint(raw: dict[str, Any] | None) -> str:
    if raw is None:
        return ABSENT
    canonical = json.dumps(raw, sort_keys=True, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def secret_digest(salt: str, name: str, value: str) -> str:
    return hashlib.sha256(f"{salt}:{name}:{value}".encode()).hexdigest()
