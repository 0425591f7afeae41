"""A raw ASGI HTTP request's scope, for the tests that call the app without a client
(a body that arrives in chunks, a proxy's root path): the one place its keys are
written."""

from __future__ import annotations

from typing import Any


def http_scope(
    method: str, path: str, headers: list[tuple[bytes, bytes]], root: str = ""
) -> dict[str, Any]:
    """The scope of `method` on `path` under the root path `root`, from loopback."""
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": root + path,
        "raw_path": (root + path).encode(),
        "query_string": b"",
        "root_path": root,
        "headers": headers,
        "server": ("127.0.0.1", 80),
        "client": ("127.0.0.1", 1),
        "state": {},
    }
