"""The endpoint URL as outputs name it: a URL may hold a user and password
(`http://user:pw@host/agents/v2`), which no plan, message or cassette shows. What
an endpoint may be: `local` or an http(s) URL, wherever it is written (the files,
`--endpoint`, AGENTFORM_ENDPOINT). And where agentform's own operations are beside
the API an endpoint names (docs/service/own-operations.md)."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from agentform.rules.paths import API_PATH, OWN_PATH


def own_url(base_url: str) -> str:
    """The URL of agentform's own operations on the server of the API's `base_url`:
    `<root>/agentform/v1` beside `<root>/agents/v2`."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    if path.endswith(API_PATH):
        path = path[: -len(API_PATH)]
    return urlunsplit((parts.scheme, parts.netloc, path + OWN_PATH, "", ""))


def shown_endpoint(url: str) -> str:
    """The endpoint as every output names it: no user or password a URL may hold, nor
    a query or fragment (a token may be written there; an endpoint has neither)."""
    import httpx  # here: `validate` checks endpoints offline and imports no HTTP client

    try:
        bare = httpx.URL(url).copy_with(username=None, password=None, query=None, fragment=None)
        return str(bare)
    except (httpx.InvalidURL, TypeError):
        return url  # not a URL: refused where it is used, never sent


def endpoint_problem(url: str) -> str | None:
    """Why `url` is not an endpoint ('local' or an http(s) URL), or None when it is one.
    Never shows a password the text holds; suggests what was probably meant."""
    if url.startswith(("http://", "https://")):
        from urllib.parse import urlsplit

        written = urlsplit(url)
        if written.query or written.fragment or url.endswith(("?", "#")):
            return (
                f"must have no query string or fragment: {shown_endpoint(url)!r} "
                "is its base URL (the service's, ending in /agents/v2)"
            )
        return None
    if url == "local":
        return None
    if "://" in url:
        return f"must be 'local' or an http(s) URL, not {shown_endpoint(url)!r}"
    from agentform.core.problems import did_you_mean

    shown = shown_endpoint(f"http://{url}").removeprefix("http://")  # `host/…`, no scheme
    hint = did_you_mean(url, ["local"]) or (f" (did you mean 'http://{shown}'?)" if url else "")
    return f"must be 'local' or an http(s) URL, not {shown!r}{hint}"


def endpoint_password(url: str) -> tuple[str, ...]:
    """The password a URL holds, as written in it (percent-encoded) and decoded:
    sensitive values of the run, to scrub wherever they could end up."""
    import httpx

    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        return ()
    written = parsed.userinfo.decode("ascii", "replace").partition(":")[2]
    return tuple(v for v in dict.fromkeys((written, parsed.password)) if v)
