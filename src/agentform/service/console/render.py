"""Console pages rendered with Jinja2: the environment, its filters, and the page helpers.

Autoescaping is on for every template, and nothing is marked safe: a value from a
user (a name, metadata, a payload, a receiver's answer) is always text in the
page. JSON is shown formatted, as text, in a `<pre>`.
"""

from __future__ import annotations

import base64
import hashlib
import json
from importlib import resources
from typing import Any
from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from agentform.service.console.sessions import Session
from agentform.service.http.binding import CONSOLE_PATH

NAV = (
    ("overview", "Overview", ""),
    ("executions", "Executions", "/executions"),
    ("deliveries", "Deliveries", "/deliveries"),
    ("batches", "Batches", "/batches"),
    ("webhooks", "Webhook integrations", "/webhooks"),
)


def pretty(value: Any) -> str:
    """JSON indented: a body or a result, one a page."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=str)


def compact(value: Any) -> str:
    """JSON on one line (wrapped by the page): an event's payload, hundreds a page, which
    the indenting encoder (pure Python) would take most of the page's time to write."""
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)


def short_id(identifier: str) -> str:
    """Eight digits that tell an id apart on a page: a time-ordered id's (UUID version
    7, as deliveries' are) begin with the instant, shared by a burst, so its tail;
    any other id's head, as a commit's is shortened."""
    if len(identifier) == 36 and identifier[14] == "7":
        return identifier[-8:]
    return identifier[:8]


def query(base: str, **params: Any) -> str:
    """`base` with the given parameters (those that are None or empty left out)."""
    kept = [(k, v) for k, v in params.items() if v not in (None, "", [], ())]
    flat: list[tuple[str, Any]] = []
    for name, value in kept:
        flat += [(name, v) for v in value] if isinstance(value, list | tuple) else [(name, value)]
    return f"{base}?{urlencode(flat)}" if flat else base


_env = Environment(
    loader=PackageLoader("agentform.service.console", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_env.filters["pretty"] = pretty
_env.filters["compact"] = compact
_env.filters["short_id"] = short_id
_env.globals["query"] = query
_env.globals["console"] = CONSOLE_PATH
_env.globals["nav"] = NAV
_env.globals["static"] = False  # a page of `agentform test --html`: no server behind it
_env.globals["delivery_href"] = lambda delivery_id: f"{CONSOLE_PATH}/deliveries/{delivery_id}"


def page(
    request: Request,
    template: str,
    session: Session | None,
    *,
    status: int = 200,
    api: str | None = None,
    **context: Any,
) -> HTMLResponse:
    """A whole page; `api` is the JSON API call that gives the same data."""
    base = str(request.base_url).rstrip("/")
    html = _env.get_template(template).render(
        session=session, api=api, api_url=base + api if api else None, **context
    )
    return HTMLResponse(html, status_code=status)


def fragment(template: str, **context: Any) -> HTMLResponse:
    """A piece of a page (new rows of a list), for the console's script to insert."""
    return HTMLResponse(_env.get_template(template).render(**context))


def error_page(request: Request, status: int, message: str) -> HTMLResponse:
    session: Session | None = getattr(request.state, "console_session", None)
    return page(request, "error.html", session, status=status, code=status, message=message)


def static_page(template: str, **context: Any) -> str:
    """A page that stands alone (`agentform test --html`): the console's stylesheet
    inside it, no script, links within the page; opened from a file, it asks
    nothing of any server."""
    css = (resources.files("agentform.service.console") / "static" / "console.css").read_text()
    digest = base64.b64encode(hashlib.sha256(css.encode()).digest()).decode()
    return _env.get_template(template).render(
        static=True,
        stylesheet=Markup(css),  # the console's own file, not a value from anyone
        style_hash=f"sha256-{digest}",  # the page's CSP allows that style and nothing else
        delivery_href=lambda delivery_id: f"#delivery-{delivery_id}",
        **context,
    )
