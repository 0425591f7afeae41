"""What every console request goes through, whatever the page: where it may come
from, the headers every answer carries, and errors as pages.

`ConsoleRoute` is the route class of the console's router. Before the page is
made it refuses a request the console must not answer: with the console bound
to loopback (the default when the service is), a client that is not on
loopback, or a `Host` that does not name loopback (a page elsewhere reaching
it through DNS rebinding). After, it adds the security headers: a
Content-Security-Policy with no inline script or style and no framing,
`X-Content-Type-Options: nosniff`, no referrer, no caching of pages. A
`ServiceError` raised on the way (another organization's execution: 404, as
an unknown one) becomes an error page with its status, and a query the page
cannot take (`?page=0`) a 400 page naming the parameter, as the API's 400 does.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import PlainTextResponse, RedirectResponse
from fastapi.routing import APIRoute

from agentform.core.errors import AgentformError
from agentform.service.console.render import error_page, query
from agentform.service.errors import ServiceError, refused_request
from agentform.service.http.binding import CONSOLE_LOOPBACK, CONSOLE_PATH, is_loopback_host

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
}


def _host_name(header: str) -> str:
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def refusal(request: Request) -> str | None:
    """Why the console will not answer this request, or None."""
    if request.app.state.settings.console != CONSOLE_LOOPBACK:
        return None
    client = request.client.host if request.client else None
    if not is_loopback_host(client):
        return "the console answers on loopback only"
    if not is_loopback_host(_host_name(request.headers.get("host", ""))):
        return "the console answers to a loopback host name only (localhost, 127.0.0.1, [::1])"
    return None


class SignInFirst(AgentformError):
    """No live session: the answer is the sign-in page, coming back here after."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


def secured(response: Response) -> Response:
    for name, value in HEADERS.items():
        response.headers.setdefault(name, value)
    response.headers.setdefault("Cache-Control", "no-store")
    return response


class ConsoleRoute(APIRoute):
    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handle = super().get_route_handler()

        async def guarded(request: Request) -> Response:
            why = refusal(request)
            if why is not None:
                return secured(PlainTextResponse(why, status_code=403))
            try:
                response = await handle(request)
            except ServiceError as exc:
                response = error_page(request, exc.status, exc.message)
            except RequestValidationError as exc:  # a query the page cannot take
                refused = refused_request(request, exc)
                response = error_page(request, refused.status, refused.message)
            except SignInFirst as exc:
                target = query(f"{CONSOLE_PATH}/sign-in", next=exc.path)
                response = RedirectResponse(target, status_code=303)
            return secured(response)

        return guarded
