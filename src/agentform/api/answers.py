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

from agentform.api.endpoint_url import shown_endpoint
from agentform.core.errors import UnexpectedAnswer
from agentform.rules.paths import API_PATH, UNKNOWN_PATH

BASE_PATH = API_PATH  # where the API is served (rules/paths.py)


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


def error_text(response: httpx.Response, endpoint: str) -> str:
    """What an error answer says: its `message`, or the status's reason (a body that is
    not JSON, or JSON of another shape: a gateway's own error page); then, for a 404
    on a path the server does not serve, where the base path is (`base_path_hint`).
    `endpoint` as outputs show it (`shown_endpoint`); the body is parsed once."""
    body = _parsed(response)
    return _said(response, body) + base_path_hint(endpoint, response.status_code, body)


def error_message(response: httpx.Response) -> str:
    """The error's `message`, or the status's reason (as `error_text` says it)."""
    return _said(response, _parsed(response))


NOT_JSON = object()  # the body of an answer that is not JSON


def _parsed(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return NOT_JSON


def _said(response: httpx.Response, body: Any) -> str:
    message = body.get("message") if isinstance(body, dict) else None
    return str(message or response.reason_phrase or "error")


def base_path_hint(endpoint: str, status: int, body: Any) -> str:
    """For a 404 on a path the server does not serve, when the endpoint (as shown)
    does not end in /agents/v2: where it should. A service's 404 about a missing
    object (its error body, another message) says nothing of the endpoint."""
    url = httpx.URL(endpoint)
    path = url.path.rstrip("/")
    if status != 404 or path.endswith(BASE_PATH) or not _unknown_path(body):
        return ""
    # another version (/agents/v1) is replaced; a path without one gets it appended
    stem = re.sub(r"/agents/v\d+$", "", path)
    suggested = url.copy_with(path=stem + BASE_PATH)
    return (
        f" (the endpoint is the service's base URL, which ends in {BASE_PATH}: "
        f"did you mean {suggested}?)"
    )


def _unknown_path(body: Any) -> bool:
    """Whether a 404's body says it is about its path: not a service's error body
    ({code, message}), or the service's own message for a path it does not serve."""
    if not isinstance(body, dict) or body.get("code") != 404:
        return True
    return not isinstance(body.get("message"), str) or body["message"] == UNKNOWN_PATH


def page_of(answer: Any, path: str, identity: str) -> tuple[list[dict[str, Any]], int | None]:
    """The items of one page of a list and its `total`; a bare JSON array is the
    whole list (total None). Any other shape is an `UnexpectedAnswer` naming the
    list, never a KeyError."""
    if isinstance(answer, list):
        items, total = answer, None
    elif (
        isinstance(answer, dict)
        and isinstance(answer.get("items"), list)
        and type(answer.get("total")) is int
    ):
        items, total = answer["items"], answer["total"]
    else:
        got = "an object without items and total" if isinstance(answer, dict) else _kind(answer)
        raise _not_a_page(path, got)
    if not all(isinstance(i, dict) and identity in i for i in items):
        raise _not_a_page(path, f"items without {identity}")
    return items, total


def _kind(value: Any) -> str:
    return {str: "a string", int: "a number", float: "a number", bool: "a boolean"}.get(
        type(value), "nothing" if value is None else type(value).__name__
    )


def _not_a_page(path: str, got: str) -> UnexpectedAnswer:
    return UnexpectedAnswer(
        "GET", path, 200, f"expected a page of items from GET {path}, got {got}"
    )
