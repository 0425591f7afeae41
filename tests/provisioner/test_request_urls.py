"""A request's URL built from the base's parse is the URL httpx parses from the text,
and a request without a body is the request httpx would build."""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import quote, urlencode

import httpx
from hypothesis import given
from hypothesis import strategies as st

from agentform.api.transport import Sender
from agentform.api.urls import RequestUrls, query_text

BASES = [
    "http://127.0.0.1:8700/agents/v2",
    "https://agents.example.com/agents/v2/",
    "http://[::1]:9/x",
    "http://localhost:1/a.b/v2",  # a base parsing might normalise: always parsed
]

segment = st.text(
    alphabet=st.sampled_from("abcXYZ019-_~.%/ é?#:@!$&'()*+,;="), min_size=0, max_size=12
)
params = st.dictionaries(
    st.text(min_size=1, max_size=6), st.one_of(st.text(max_size=8), st.integers()), max_size=3
)


def parsed(base: str, path: str, query: dict[str, Any] | None) -> httpx.URL:
    text = base.rstrip("/") + path
    if query:
        text += "?" + urlencode(query, quote_via=quote)
    return httpx.URL(text)


@given(
    base=st.sampled_from(BASES),
    segments=st.lists(segment, max_size=4),
    query=st.one_of(st.none(), params),
)
def test_the_built_url_is_the_parsed_url(
    base: str, segments: list[str], query: dict[str, Any] | None
) -> None:
    path = "".join("/" + s for s in segments)
    built = RequestUrls(base).url(path, query)
    expected = parsed(base, path, query)
    assert built == expected
    assert str(built) == str(expected)
    assert built.raw_path == expected.raw_path
    assert (built.host, built.port, built.scheme) == (expected.host, expected.port, expected.scheme)


@given(
    st.dictionaries(
        st.text(alphabet="aZ09_.~-% é&=", max_size=6),
        st.one_of(
            st.text(alphabet="aZ09_.~-% é&=/", max_size=8),
            st.integers(),
            st.booleans(),
            st.floats(allow_nan=False),
        ),
        max_size=3,
    )
)
def test_a_query_is_what_urlencode_writes(query: dict[str, Any]) -> None:
    known: dict[Any, str] = {}
    assert query_text(query) == urlencode(query, quote_via=quote)
    assert query_text(query, known) == query_text(query, known) == urlencode(query, quote_via=quote)


def test_a_remembered_query_is_not_given_for_an_equal_one_written_otherwise() -> None:
    # 1 == True == 1.0 and 0.0 == -0.0, but urlencode writes each its own way
    known: dict[Any, str] = {}
    for value in (1, True, 1.0, 0, False, 0.0, -0.0, "1"):
        assert query_text({"page": value}, known) == urlencode({"page": value}, quote_via=quote)
    names: list[Any] = [1, True, 1.0]
    for name in names:
        assert query_text({name: "a"}, known) == urlencode({name: "a"}, quote_via=quote)
    assert len(known) == 4  # page=1, page=0, page="1" and 1=a: no bool nor float kept


def test_a_plain_path_is_not_parsed_again() -> None:
    urls = RequestUrls("http://127.0.0.1:8700/agents/v2")
    url = urls.url("/agent-profile-pools/1f2e/members", {"page": 2, "name": "a b"})
    assert (
        str(url)
        == "http://127.0.0.1:8700/agents/v2/agent-profile-pools/1f2e/members?page=2&name=a%20b"
    )
    # the base's parse, with only the path and query replaced
    assert url._uri_reference.authority == urls.reference.authority


def test_a_dot_segment_is_normalised_as_httpx_normalises_it() -> None:
    url = RequestUrls("http://127.0.0.1:8700/agents/v2").url("/pools/../x", None)
    assert url.raw_path == b"/agents/v2/x"


def _sent(
    sender: Sender, method: str, path: str, query: dict[str, Any] | None, body: Any = None
) -> httpx.Request:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(204)

    sender.transport = httpx.MockTransport(answer)
    asyncio.run(sender.send(method, path, body, query))
    return seen[0]


@given(
    base=st.sampled_from(BASES),
    method=st.sampled_from(["GET", "DELETE", "HEAD", "POST", "PUT", "PATCH"]),
    segments=st.lists(segment, max_size=3),
    query=st.one_of(st.none(), params),
    key=st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1),
)
def test_a_request_without_a_body_is_the_one_httpx_builds(
    base: str, method: str, segments: list[str], query: dict[str, Any] | None, key: str
) -> None:
    """Its headers are completed once per client, not by httpx for every request: the
    same headers, in the same order, as httpx's own completion gives (Host first,
    Content-Length: 0 where a body is expected), the same URL and an empty body."""
    path = "".join("/" + s for s in segments)
    sender = Sender(base, key, None, 1)
    request = _sent(sender, method, path, query)
    expected = httpx.Request(
        method,
        sender.urls.url(path, query),
        headers=sender.headers,
        extensions=sender.extensions,
    )
    assert request.headers.raw == expected.headers.raw
    assert (request.method, request.url, request.content) == (method, expected.url, b"")
    assert request.extensions == expected.extensions


def test_a_request_with_a_body_keeps_httpx_s_completion() -> None:
    body = {"name": 'é \\ " x'}
    request = _sent(Sender(BASES[0], "k", None, 1), "POST", "/agent-profile-pools", None, body)
    assert request.headers["Content-Type"] == "application/json"
    assert json.loads(request.content) == body
    assert request.headers["Content-Length"] == str(len(request.content))
