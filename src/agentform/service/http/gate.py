"""What every operation decides before its body is read
(docs/service/contract.md#conventions, #authentication-and-organizations).

`ServiceRoute` is the route class of every operation under the base path: after
routing (so an unknown path is 404 whatever the key), it authenticates the
caller and checks the role (401, 403), then refuses a body declared larger than
the route's limit (400, nothing read), and counts a streamed body as it arrives
(400 at the first chunk past the limit, 408 when a chunk is late: see
`timeouts`). Only then does FastAPI read the body. Text UTF-8 cannot encode
is refused there too (400 naming it), in the query and in a JSON body, so no
row is ever stored that a list cannot serve (`rules.values.unencodable_at`).
The limit is 1 MiB; a route that takes more (a file upload) says so with
`max_body_size=` on its decorator.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import unquote_to_bytes

from fastapi import APIRouter, Request, Response
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException
from starlette.routing import Match
from starlette.types import Message, Receive, Scope

from agentform.rules.paths import API_PATH, OWN_PATH
from agentform.rules.requests import MAX_BODY, described
from agentform.rules.values import unencodable_at, unencodable_problem
from agentform.rules.webhook_targets import private_webhooks_allowed
from agentform.service.errors import RefusedBody, bad_request
from agentform.service.http.auth import authenticate
from agentform.service.http.timeouts import receive_within
from agentform.service.settings import ServiceSettings

UTF8_ONLY = "must be UTF-8 text, percent-encoded"


def _too_large(limit: int) -> str:
    return f"the request body is larger than {described(limit)}"


class ServiceRoute(APIRoute):
    def __init__(self, *args: Any, max_body_size: int | None = None, **kwargs: Any) -> None:
        # Kept from FastAPI, whose own limit answers 413 in plain text.
        self.body_limit = MAX_BODY if max_body_size is None else max_body_size
        super().__init__(*args, **kwargs)
        # The path up to its first parameter: no path without it can match.
        self.literal_prefix = self.path.split("{", 1)[0]

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        """FastAPI's match, after a test of the path's literal start: a request is
        matched against each route in turn until one takes it, and most are told
        apart by their first segment (about half the cost of the full match)."""
        # Under a root path (a proxy's prefix), the full match strips it first.
        plain = scope["type"] == "http" and not scope.get("root_path")
        if plain and not scope["path"].startswith(self.literal_prefix):
            return Match.NONE, {}
        return super().matches(scope)

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handle = super().get_route_handler()
        limit = self.body_limit

        async def gated(request: Request) -> Response:
            request.state.caller = authenticate(request)
            _check_path(request.scope.get("raw_path"))
            _check_query(request.scope.get("query_string", b""))
            declared = request.headers.get("content-length")
            if declared is not None and declared.isdigit() and int(declared) > limit:
                raise bad_request([("body", _too_large(limit))])
            settings: ServiceSettings = request.app.state.settings
            # read by the webhook URL rule
            token = private_webhooks_allowed.set(settings.allow_private_webhooks)
            receive = receive_within(request.receive, settings.read_timeout_seconds)
            receive = _counted(receive, limit)
            try:
                return await handle(_CheckedRequest(request.scope, receive))
            finally:
                private_webhooks_allowed.reset(token)

        return gated


def _check_path(raw: bytes | None) -> None:
    """Refuses a path whose percent-decoded bytes are not UTF-8 (Starlette reads them
    as U+FFFD, which an answer would then echo), as a query parameter's are."""
    try:
        unquote_to_bytes(raw or b"").decode()
    except UnicodeDecodeError:
        raise bad_request([("path", UTF8_ONLY)]) from None


def _check_query(query: bytes) -> None:
    """Refuses a query parameter whose percent-decoded bytes are not UTF-8 (Starlette
    would read them as U+FFFD and search for that)."""
    for pair in query.split(b"&"):
        name, _, value = pair.partition(b"=")
        try:
            text = [unquote_to_bytes(part.replace(b"+", b" ")).decode() for part in (name, value)]
        except UnicodeDecodeError:
            label = unquote_to_bytes(name).decode(errors="replace") or "query"
            raise bad_request([(label, UTF8_ONLY)]) from None
        for part in text:
            if problem := unencodable_problem(part):
                raise bad_request([(text[0], problem)])


class _CheckedRequest(Request):
    """A request whose JSON body holds only text UTF-8 can encode."""

    async def json(self) -> Any:
        value = await super().json()
        body = await self.body()
        # Without a `\\u` escape, text read from valid UTF-8 holds no lone surrogate.
        if b"\\u" in body or not _is_utf8(body):
            found = unencodable_at(value)
            if found is not None:
                raise RefusedBody([(found[0] or "body", found[1])])
        return value


def _is_utf8(body: bytes) -> bool:
    try:
        body.decode()
    except UnicodeDecodeError:
        return False
    return True


def _counted(receive: Receive, limit: int) -> Receive:
    seen = 0

    async def counted() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                # An HTTPException passes through FastAPI's body reading unchanged.
                raise HTTPException(400, detail=_too_large(limit))
        return message

    return counted


AGENTFORM_PATH = OWN_PATH
"""Where agentform's own operations serve (the clock, routing explanations): beside
the Agent Service API, not part of it, and left out of its OpenAPI document."""


def agentform_router(**kwargs: Any) -> APIRouter:
    """An APIRouter of agentform's own operations: gated like the API's, served
    under AGENTFORM_PATH, not in the OpenAPI document."""
    return APIRouter(
        route_class=ServiceRoute, prefix=AGENTFORM_PATH, include_in_schema=False, **kwargs
    )


def api_router(prefix: str = "", **kwargs: Any) -> APIRouter:
    """An APIRouter whose operations go through the gate (use it for every router),
    served under the API's base path (then `prefix`)."""
    return APIRouter(route_class=ServiceRoute, prefix=API_PATH + prefix, **kwargs)
