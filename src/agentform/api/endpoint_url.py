"""The endpoint URL as outputs name it: a URL may hold a user and password
(`http://user:pw@host/agents/v2`), which no plan, message or cassette shows."""

from __future__ import annotations

import httpx


def shown_endpoint(url: str) -> str:
    """The endpoint as every output names it: no user or password a URL may hold."""
    try:
        return str(httpx.URL(url).copy_with(username=None, password=None))
    except (httpx.InvalidURL, TypeError):
        return url  # not a URL: refused where it is used, never sent


def endpoint_password(url: str) -> tuple[str, ...]:
    """The password a URL holds, as written in it (percent-encoded) and decoded:
    sensitive values of the run, to scrub wherever they could end up."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        return ()
    written = parsed.userinfo.decode("ascii", "replace").partition(":")[2]
    return tuple(v for v in dict.fromkeys((written, parsed.password)) if v)
