"""A request's URL built from the base's parse is the URL httpx parses from the text."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

import httpx
from hypothesis import given
from hypothesis import strategies as st

from agentform.api.urls import RequestUrls

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
