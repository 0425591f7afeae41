"""The service's error shape: every failure answers `{code, message, errors?}`.

Handlers here translate FastAPI/Starlette failures (validation, routing,
unexpected exceptions) into the body of API.md §3, so no framework default
shape (and never a 422) leaks out.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from ..rules.problems import problem_of

log = logging.getLogger("agentform.service")


class ErrorDetail(BaseModel):
    parameter: str
    detail: str


class ErrorBody(BaseModel):
    code: int
    message: str
    errors: list[ErrorDetail] | None = None


class ServiceError(Exception):
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


def not_found(what: str) -> ServiceError:
    return ServiceError(404, f"{what} not found")


def conflict(message: str) -> ServiceError:
    return ServiceError(409, message)


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


def _validation_errors(exc: RequestValidationError) -> list[tuple[str, str]]:
    """FastAPI's errors in the wording every rule uses (`rules.problems`)."""
    out = []
    for err in exc.errors():
        loc = list(err.get("loc", ()))
        if loc and loc[0] in ("body", "query", "path", "header"):
            loc = loc[1:]
        problem = problem_of(err, loc)
        out.append((problem.parameter, problem.detail))
    return out


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ServiceError)
    async def _service_error(_: Request, exc: ServiceError) -> JSONResponse:
        return error_response(exc.status, exc.message, exc.errors, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = _validation_errors(exc)
        message = "; ".join(f"{p}: {d}" for p, d in errors) or "invalid request"
        return error_response(400, message, errors)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        # Unknown paths and methods a path does not have are both 404 (API.md §3).
        if exc.status_code in (404, 405):
            return error_response(404, "no such operation")
        if exc.status_code == 400:  # raised while the body was read: it names the body
            return error_response(400, str(exc.detail), [("body", str(exc.detail))])
        return error_response(exc.status_code, str(exc.detail))

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
