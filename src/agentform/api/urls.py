"""Request URLs built from one parsed base, without parsing every URL again.

httpx parses and checks every character of every URL it is given (its parser
was 29% of a plan's per-request CPU). agentform's paths and queries are
mostly ASCII that parsing leaves as it is: a path of plain segments (ids,
collection names) and a query `urlencode` has percent-encoded. For those the
URL is the base's parse result with its path and query replaced, which is what
parsing the joined text would give (`tests/provisioner/test_request_urls.py`
checks that it is, for any path and query). Any other path (a dot segment, a
character parsing would encode or normalise) takes httpx's parser as before.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote, urlencode

import httpx

_PLAIN_PATH = re.compile(r"(?:/[A-Za-z0-9_~-]+)*/?")
"""Segments of unreserved characters, no dots: parsing changes nothing in them."""
_UNRESERVED = re.compile(r"[A-Za-z0-9_.~-]*")
"""What `quote` leaves as it is."""


_REMEMBERED = frozenset({str, int})
"""Names and values of these types are equal only when they are written alike (not
so True and 1, or 0.0 and -0.0): a query of them is remembered by equality."""
_KEPT = 256  # queries one client remembers


def query_text(params: dict[str, Any], known: dict[Any, str] | None = None) -> str:
    """`urlencode(params, quote_via=quote)`. With `known` (a client's own: what it
    remembers goes with it, revealed values included), a query of strings and
    integers is remembered there: the reads of a plan ask few distinct queries
    (every member list's is `pageSize=100&page=1`)."""
    if (
        known is not None
        and _REMEMBERED.issuperset(map(type, params))
        and _REMEMBERED.issuperset(map(type, params.values()))
    ):
        key = tuple(params.items())
        if (text := known.get(key)) is None:
            if len(known) >= _KEPT:
                known.clear()
            text = known[key] = _written(params)
        return text
    return _written(params)


def _written(params: dict[str, Any]) -> str:
    """Written directly when every name and value is a string `quote` leaves as it is
    or an integer (a page's number and size), at half urlencode's cost; any other
    query through urlencode."""
    parts = []
    for name, value in params.items():
        text = str(value) if type(value) is int else value
        if type(name) is not str or type(text) is not str:
            return urlencode(params, quote_via=quote)
        if not (_UNRESERVED.fullmatch(name) and _UNRESERVED.fullmatch(text)):
            return urlencode(params, quote_via=quote)
        parts.append(f"{name}={text}")
    return "&".join(parts)


class RequestUrls:
    """The URLs of requests to one base URL (`http://host:port/agents/v2`)."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.base = httpx.URL(self.base_url)
        self.queries: dict[Any, str] = {}
        reference = self.base._uri_reference  # httpx's parse result: a NamedTuple
        self.reference = reference
        self.prefix = reference.path.rstrip("/")
        self.plain_base = (
            reference.query is None
            and reference.fragment is None
            and _PLAIN_PATH.fullmatch(reference.path) is not None
        )

    def url(self, path: str, params: dict[str, Any] | None = None) -> httpx.URL:
        """The URL of `path` (below the base) with `params` as its query."""
        query = query_text(params, self.queries) if params else None
        if self.plain_base and _PLAIN_PATH.fullmatch(path):
            url = httpx.URL.__new__(httpx.URL)
            url._uri_reference = self.reference._replace(path=self.prefix + path, query=query)
            return url
        return httpx.URL(self.base_url + path + (f"?{query}" if query else ""))
