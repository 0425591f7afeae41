"""The service's error shape: every failure answers `{code, message, errors?}`.

Handlers here translate FastAPI/Starlette failures (validation, routing,
unexpected exceptions) into the error body (docs/service/contract.md#errors), so no
framework default shape (and never a 422) leaks out.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match
from starlette.types import ASGIApp, Receive, Scope, Send

from agentform.core.errors import AgentformError
from agentform.core.problems import Problem, own_errors, problems_of
from agentform.rules.paths import UNKNOWN_PATH

log = logging.getLogger("agentform.service")


class ServiceError(AgentformError):
    """Raised by handlers; becomes an error response with this status."""

    def __init__(
        self,
        status: int,
        message: str,
        errors: Sequence[tuple[str, str]] = (),
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.errors = list(errors)
        self.headers = headers


class RefusedBody(StarletteHTTPException):
    """A 400 raised while FastAPI reads the body (which passes an HTTPException
    through unchanged, where it would turn any other error into a bare 400)."""

    def __init__(self, problems: Sequence[tuple[str, str]]) -> None:
        super().__init__(400, detail="; ".join(f"{p}: {d}" for p, d in problems))
        self.problems = list(problems)


STORAGE_FULL = (
    "the service's storage is full, so nothing was written; reads still work. "
    "Its operator frees space on its disk (or removes old data: agentform service "
    "prune --older-than AGE), then the request can be sent again"
)


class StorageFull(ServiceError):
    """A write refused because the disk (or the database's size limit) is full: 507
    (RFC 4918 §11.5), the transaction rolled back whole."""

    def __init__(self) -> None:
        super().__init__(507, STORAGE_FULL)


def not_found(what: str) -> ServiceError:
    return ServiceError(404, f"{what} not found")


def conflict(message: str) -> ServiceError:
    return ServiceError(409, message)


METHOD_ORDER = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


def allowed_methods(request: Request) -> str:
    """Every method the request's path has, for `Allow` (Starlette's 405 names only
    those of the first route that matched the path)."""
    routes = request.app.router.routes

    def has(method: str) -> bool:
        scope = {**request.scope, "method": method}
        return any(route.matches(scope)[0] == Match.FULL for route in routes)

    return ", ".join(m for m in METHOD_ORDER if has(m))


def error_response(
    status: int,
    message: str,
    errors: Sequence[tuple[str, str]] = (),
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body: dict[str, Any] = {"code": status, "message": message}
    if errors:
        body["errors"] = [{"parameter": p, "detail": d} for p, d in errors]
    return JSONResponse(body, status_code=status, headers=headers)


def bad_request(problems: Iterable[tuple[str, str] | Problem]) -> ServiceError:
    """A 400 naming each parameter at fault; its message says them all, as the errors do.
    The one place a 400's body is worded."""
    pairs = [(p.parameter, p.detail) if isinstance(p, Problem) else p for p in problems]
    message = "; ".join(f"{p}: {d}" for p, d in pairs) or "invalid request"
    return ServiceError(400, message, pairs)


_JSON_TYPES = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
_NOT_AN_OBJECT = frozenset({"model_attributes_type", "model_type", "dict_type"})


def _body_problem(error: Mapping[str, Any], content_type: str) -> str | None:
    """A body that is not a JSON object, in words: what was sent instead."""
    if error.get("type") not in _NOT_AN_OBJECT:
        return None
    media = content_type.split(";", 1)[0].strip().lower()
    if media != "application/json":
        sent = f"this one is {media}" if media else "this one has none"
        return f"the body must be a JSON object, sent with Content-Type: application/json ({sent})"
    value = error.get("input")
    kind = _JSON_TYPES.get(type(value), "a number" if isinstance(value, int | float) else None)
    return f"the body must be a JSON object, not {kind}" if kind else None


def _validation_errors(
    exc: RequestValidationError, content_type: str, body_model: Any = None
) -> list[tuple[str, str]]:
    """FastAPI's errors in the wording every rule uses (`rules.problems`), each naming
    the parameter as the caller wrote it: a body field by its path, a query parameter
    by its name (`status`, however many times it is repeated)."""
    out = []
    for err in own_errors(exc.errors()):
        where, *loc = list(err.get("loc", ())) or ["body"]
        if where == "query":
            loc = [part for part in loc if not isinstance(part, int)]
        elif where not in ("body", "path", "header"):
            loc = [where, *loc]
        if where == "body" and not loc:
            detail = _body_problem(err, content_type)
            if detail:
                out.append(("body", detail))
                continue
        model = body_model if where == "body" else None
        out.extend((p.parameter, p.detail) for p in problems_of(err, loc, model))
    return out


def refused_request(request: Request, exc: RequestValidationError) -> ServiceError:
    """The 400 of a request whose parameters or body do not validate, in words."""
    content_type = request.headers.get("content-type", "")
    body = getattr(request.scope.get("route"), "body_field", None)
    body_model = body.field_info.annotation if body is not None else None
    return bad_request(_validation_errors(exc, content_type, body_model))


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ServiceError)
    async def _service_error(_: Request, exc: ServiceError) -> JSONResponse:
        return error_response(exc.status, exc.message, exc.errors, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        error = refused_request(request, exc)
        return error_response(error.status, error.message, error.errors)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # An unknown path is 404; a method a known path does not have is 405 with
        # every method the path has in Allow (RFC 9110 §15.5.6).
        if exc.status_code == 404:
            return error_response(404, UNKNOWN_PATH)
        if exc.status_code == 405:
            allowed = allowed_methods(request)
            message = f"this path does not take {request.method}; it takes {allowed}"
            return error_response(405, message, headers={"Allow": allowed})
        if isinstance(exc, RefusedBody):
            refused = bad_request(exc.problems)
            return error_response(400, refused.message, refused.errors)
        if exc.status_code == 400:  # raised while the body was read: it names the body
            return error_response(400, str(exc.detail), [("body", str(exc.detail))])
        headers = dict(exc.headers) if exc.headers else None
        return error_response(exc.status_code, str(exc.detail), headers=headers)

    app.add_middleware(ErrorShieldMiddleware)


class ErrorShieldMiddleware:
    """Turns any unexpected exception into a bare 500, with no internal detail."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Any) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception:
            log.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
            if started:
                raise
            await error_response(500, "internal server error")(scope, receive, send)
