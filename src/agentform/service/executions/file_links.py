"""Presigned links to the files executions produce (EXECUTION_FILE_ADDED's `presigned_url`).

A link names the file and when it expires, and carries an HMAC-SHA256 of both
made with a secret the database keeps (made once, on first use), so links stay
valid across restarts, cannot be forged or extended, and need no API key:
whoever has the link may fetch the file until it expires. The service serves
them itself at `GET /execution-files/{fileId}`.
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import datetime
from urllib.parse import urlencode

LINK_SECONDS = 3600
"""How long a link stays valid: one hour."""

FILES_PATH = "/execution-files"


def _signature(secret: bytes, file_id: str, expires: int) -> str:
    return hmac.new(secret, f"{file_id}:{expires}".encode(), hashlib.sha256).hexdigest()


def presigned_url(secret: bytes, public_url: str, file_id: str, now: datetime) -> str:
    """A link to the file, valid for LINK_SECONDS from `now`."""
    expires = int(now.timestamp()) + LINK_SECONDS
    query = urlencode({"expires": expires, "signature": _signature(secret, file_id, expires)})
    return f"{public_url.rstrip('/')}{FILES_PATH}/{file_id}?{query}"


def link_problem(
    secret: bytes | None, file_id: str, expires: int, signature: str, now: datetime
) -> str | None:
    """Why the link does not open the file (None: it does)."""
    expected = _signature(secret, file_id, expires) if secret else ""
    # Bytes: compare_digest refuses a str that is not ASCII (a 500 on `%C3%A9`).
    if not expected or not hmac.compare_digest(expected.encode(), signature.encode()):
        return "the link's signature is not valid"
    if now.timestamp() > expires:
        return "the link has expired"
    return None
