"""Signing in and out of the console, and what a page asks of its caller.

`signed_in` is the dependency of every page: the live session of the request's
cookie, or a redirect to the sign-in page. `admin_form` is the one of every
action: a session whose key may write (as the API's gate: a read key is 403)
and the form's CSRF token matching the session's.
"""

from __future__ import annotations

import secrets

from fastapi import APIRouter, Request, Response
from fastapi.responses import RedirectResponse

from agentform.service.console.guard import ConsoleRoute, SignInFirst
from agentform.service.console.render import page
from agentform.service.console.sessions import (
    COOKIE_PATH,
    SESSION_COOKIE,
    SESSION_SECONDS,
    SIGNIN_COOKIE,
    Session,
    Sessions,
    same_token,
)
from agentform.service.errors import ServiceError
from agentform.service.http.binding import CONSOLE_PATH


def page_router() -> APIRouter:
    """A router of console pages: each page module has its own, and `install_console`
    includes each one by name (no page is added by the side effect of an import)."""
    return APIRouter(route_class=ConsoleRoute, prefix=CONSOLE_PATH, include_in_schema=False)


router = page_router()  # sign-in and sign-out
# Served after every page: an unknown console path is a console 404 page, with its headers.
fallback = APIRouter(route_class=ConsoleRoute, prefix=CONSOLE_PATH, include_in_schema=False)
MAX_FIELD = 4096  # longer than any key: a longer form field is refused unread


def sessions(request: Request) -> Sessions:
    found: Sessions = request.app.state.console_sessions
    return found


def signed_in(request: Request) -> Session:
    session = sessions(request).find(request.cookies.get(SESSION_COOKIE))
    if session is None:
        path = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        raise SignInFirst(path)
    request.state.console_session = session
    return session


async def form_of(request: Request) -> dict[str, str]:
    form = await request.form(max_files=0, max_fields=50, max_part_size=MAX_FIELD)
    return {k: v for k, v in form.items() if isinstance(v, str) and len(v) <= MAX_FIELD}


async def admin_form(request: Request) -> tuple[Session, dict[str, str]]:
    """The session and the form of an action, after the role and the CSRF token."""
    session = signed_in(request)
    form = await form_of(request)
    if not same_token(form.get("csrf"), session.csrf):
        raise ServiceError(403, "this form has expired or did not come from the console")
    if not session.admin:
        raise ServiceError(403, "this API key may only read")
    return session, form


def _cookie(response: Response, request: Request, name: str, value: str, age: int) -> None:
    response.set_cookie(
        name,
        value,
        max_age=age,
        path=COOKIE_PATH,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


def _safe_next(target: str | None) -> str:
    """Only a console path: never another site (`//evil`, `/\\evil`) after signing in."""
    target = target or ""
    path = target.split("?")[0]
    if path.startswith(CONSOLE_PATH + "/") and "\\" not in target and "//" not in path:
        return target
    return CONSOLE_PATH + "/"


def _sign_in_page(request: Request, target: str | None, problem: str | None) -> Response:
    token = secrets.token_urlsafe(32)
    status = 401 if problem else 200
    shown = page(
        request, "sign_in.html", None, status=status, csrf=token, next=target, problem=problem
    )
    _cookie(shown, request, SIGNIN_COOKIE, token, 3600)
    return shown


@router.get("/sign-in")
async def sign_in_form(request: Request, next: str | None = None) -> Response:
    return _sign_in_page(request, _safe_next(next), None)


@router.post("/sign-in")
async def sign_in(request: Request) -> Response:
    form = await form_of(request)
    target = _safe_next(form.get("next"))
    if not same_token(form.get("csrf"), request.cookies.get(SIGNIN_COOKIE) or "\0"):
        return _sign_in_page(request, target, "The sign-in form expired: please sign in again.")
    started = sessions(request).sign_in(form.get("key", "").strip())
    if started is None:
        return _sign_in_page(request, target, "That API key is not valid for this service.")
    token, _ = started
    response = RedirectResponse(target, status_code=303)
    _cookie(response, request, SESSION_COOKIE, token, SESSION_SECONDS)
    response.delete_cookie(SIGNIN_COOKIE, path=COOKIE_PATH)
    return response


@router.post("/sign-out")
async def sign_out(request: Request) -> Response:
    session = signed_in(request)
    form = await form_of(request)
    if not same_token(form.get("csrf"), session.csrf):
        raise ServiceError(403, "this form has expired or did not come from the console")
    sessions(request).sign_out(request.cookies.get(SESSION_COOKIE))
    response = RedirectResponse(CONSOLE_PATH + "/sign-in", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path=COOKIE_PATH)
    return response


@fallback.api_route("/{rest:path}", methods=["GET", "POST", "HEAD"])
async def unknown(rest: str) -> Response:
    raise ServiceError(404, "no such console page")
