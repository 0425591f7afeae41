"""Reading an answer's body: JSON or a clear error, and hints about the endpoint.

A proxy or a web server that is not the service answers 200 with an HTML page;
that is an `UnexpectedAnswer` naming the call and what came back, never a
traceback. A 404 on an endpoint that does not end in the API's base path says
where the base path is.
"""

from __future__ import annotations

import re
from typing import Any

import httpx

from ..errors import UnexpectedAnswer
from .endpoint_url import shown_endpoint

BASE_PATH = "/agents/v2"


def decoded(response: httpx.Response, method: str) -> Any:
    """The JSON body of a successful answer (None when empty)."""
    if not response.content:
        return None
    media = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if media and media != "application/json" and not media.endswith("+json"):
        raise _unexpected(response, method, media)
    try:
        return response.json()
    except ValueError:
        raise _unexpected(response, method, "a body that is not JSON") from None


def _unexpected(response: httpx.Response, method: str, got: str) -> UnexpectedAnswer:
    """The error, with the URL worked out only now (not for every answer)."""
    where = f"{method} {_url(response)}" if _has_request(response) else method
    return UnexpectedAnswer(
        method, where, response.status_code, f"expected JSON from {where}, got {got}"
    )


def _url(response: httpx.Response) -> str:
    return shown_endpoint(str(response.request.url.copy_with(query=None)))


def _has_request(response: httpx.Response) -> bool:
    try:
        response.request  # noqa: B018 (a response built by hand has none)
    except RuntimeError:
        return False
    return True


def base_path_hint(base_url: str, status: int) -> str:
    """For a 404 when the endpoint does not end in /agents/v2: where it should."""
    url = httpx.URL(shown_endpoint(base_url))
    path = url.path.rstrip("/")
    if status != 404 or path.endswith(BASE_PATH):
        return ""
    # another version (/agents/v1) is replaced; a path without one gets it appended
    stem = re.sub(r"/agents/v\d+$", "", path)
    suggested = url.copy_with(path=stem + BASE_PATH)
    return (
        f" (the endpoint is the service's base URL, which ends in {BASE_PATH}: "
        f"did you mean {suggested}?)"
    )
