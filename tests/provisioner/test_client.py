"""The API client's retry and error rules, against scripted ASGI apps and transports."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from agentform.api.client import ApiClient
from agentform.api.retries import RetryPolicy
from agentform.core.errors import ApiError
from tests.clock import InstantClock

Reply = tuple[int, Any, dict[str, str]]


class Scripted(httpx.AsyncBaseTransport):
    """Answers each request with the next scripted reply (or raises it)."""

    def __init__(self, replies: list[Reply | Exception]) -> None:
        self.replies = replies
        self.requests: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        status, body, headers = reply
        content = json.dumps(body).encode() if body is not None else b""
        return httpx.Response(status, content=content, headers=headers)


def client(transport: httpx.AsyncBaseTransport, waits: list[float] | None = None) -> ApiClient:
    return ApiClient(
        "http://svc/agents/v2",
        "secret-key-123456",
        transport=transport,
        retry=RetryPolicy(attempts=4, base_delay=0.1, max_delay=5),
        clock=InstantClock(waits),
    )


def run(
    fn: Callable[[ApiClient], Any], transport: Scripted, waits: list[float] | None = None
) -> Any:
    async def go() -> Any:
        async with client(transport, waits) as api:
            return await fn(api)

    return asyncio.run(go())


ERR = {"code": 500, "message": "boom"}


def test_sends_the_key_and_decodes() -> None:
    t = Scripted([(200, {"ok": 1}, {})])
    assert run(lambda api: api.request("GET", "/context"), t) == {"ok": 1}
    assert t.requests[0].headers["X-Api-Key"] == "secret-key-123456"
    assert str(t.requests[0].url) == "http://svc/agents/v2/context"


def test_get_is_retried_on_5xx_429_and_transport_errors_honouring_retry_after() -> None:
    waits: list[float] = []
    t = Scripted(
        [
            (503, ERR, {}),
            (429, {"code": 429, "message": "slow"}, {"Retry-After": "3"}),
            httpx.ReadError("reset"),
            (200, {"ok": 1}, {}),
        ]
    )
    assert run(lambda api: api.request("GET", "/x"), t, waits) == {"ok": 1}
    assert len(t.requests) == 4
    assert waits[1] == 3.0  # Retry-After
    # jittered backoff of failures 1 and 2 (a 429 is a throttle, not a failure)
    assert 0.05 <= waits[0] <= 0.1 and 0.1 <= waits[2] <= 0.2


def test_retry_after_is_capped() -> None:
    waits: list[float] = []
    t = Scripted([(429, {"code": 429, "message": "x"}, {"Retry-After": "3600"}), (200, {}, {})])
    run(lambda api: api.request("GET", "/x"), t, waits)
    assert waits == [5]


def test_attempts_are_capped_and_the_error_is_typed() -> None:
    t = Scripted([(500, ERR, {})] * 4)
    with pytest.raises(ApiError) as info:
        run(lambda api: api.request("GET", "/x"), t)
    assert (info.value.status, info.value.message, info.value.method, info.value.path) == (
        500,
        "boom",
        "GET",
        "/x",
    )
    assert len(t.requests) == 4


def test_4xx_is_not_retried() -> None:
    t = Scripted([(409, {"code": 409, "message": "name taken"}, {})])
    with pytest.raises(ApiError, match="409 name taken"):
        run(lambda api: api.request("PATCH", "/x", json={}), t)
    assert len(t.requests) == 1


def test_create_is_not_retried_blindly_after_5xx() -> None:
    t = Scripted([(500, ERR, {})])
    with pytest.raises(ApiError):
        run(lambda api: api.request("POST", "/agent-profile-pools", json={"name": "a"}), t)
    assert len(t.requests) == 1


def test_create_is_retried_when_the_connection_was_never_made() -> None:
    t = Scripted([httpx.ConnectError("refused"), (201, {"id": "1"}, {})])
    answer = run(lambda api: api.request("POST", "/p", json={"name": "a"}), t)
    assert answer == {"id": "1"} and len(t.requests) == 2


def test_create_after_5xx_adopts_what_a_lookup_finds() -> None:
    t = Scripted([(500, ERR, {})])

    async def lookup() -> Any:
        return {"id": "found", "name": "a"}

    answer = run(lambda api: api.request("POST", "/p", json={"name": "a"}, lookup=lookup), t)
    assert answer == {"id": "found", "name": "a"} and len(t.requests) == 1


def test_create_after_5xx_is_retried_when_a_lookup_finds_nothing() -> None:
    t = Scripted([httpx.ReadTimeout("slow"), (201, {"id": "2"}, {})])
    looked: list[int] = []

    async def lookup() -> Any:
        looked.append(1)
        return None

    answer = run(lambda api: api.request("POST", "/p", json={"name": "a"}, lookup=lookup), t)
    assert answer == {"id": "2"} and looked == [1]


def test_a_retried_delete_that_finds_nothing_succeeded_earlier() -> None:
    t = Scripted([(502, ERR, {}), (404, {"code": 404, "message": "pool not found"}, {})])
    assert run(lambda api: api.request("DELETE", "/p/1"), t) is None
    t = Scripted([(404, {"code": 404, "message": "pool not found"}, {})])
    with pytest.raises(ApiError, match="404"):
        run(lambda api: api.request("DELETE", "/p/1"), t)


def test_list_all_reads_every_page_at_size_100() -> None:
    pages = {p: [{"id": f"{p}-{i}"} for i in range(100 if p < 3 else 30)] for p in (1, 2, 3)}
    t = Scripted(
        [
            (200, {"items": pages[p], "page": p, "pageSize": 100, "total": 230}, {})
            for p in (1, 2, 3)
        ]
    )
    items = run(lambda api: api.list_all("/x"), t)
    assert len(items) == 230
    assert [r.url.params["pageSize"] for r in t.requests] == ["100"] * 3
    assert sorted(r.url.params["page"] for r in t.requests) == ["1", "2", "3"]


def test_list_all_refuses_duplicates() -> None:
    from agentform.core.errors import ReadError

    t = Scripted(
        [
            (200, {"items": [{"id": "a"}] * 100, "page": 1, "pageSize": 100, "total": 101}, {}),
            (200, {"items": [{"id": "a"}], "page": 2, "pageSize": 100, "total": 101}, {}),
        ]
    )
    with pytest.raises(ReadError):
        run(lambda api: api.list_all("/x"), t)


def test_list_all_takes_a_bare_array_as_the_whole_list() -> None:
    t = Scripted([(200, [{"id": "a"}, {"id": "b"}], {})])
    assert run(lambda api: api.list_all("/vault/templates"), t) == [{"id": "a"}, {"id": "b"}]
    assert len(t.requests) == 1
    from agentform.core.errors import ReadError

    t = Scripted([(200, [{"id": "a"}, {"id": "a"}], {})])
    with pytest.raises(ReadError):
        run(lambda api: api.list_all("/vault/templates"), t)


class Paged(httpx.AsyncBaseTransport):
    """A list of `total` items at /x in pages of 100 (each item's deep read at
    /x/<id>/y); pages after the first wait for `more`. Records paths as sent."""

    def __init__(self, total: int, answered: int | None = None) -> None:
        self.total = total
        self.answered = total if answered is None else answered  # fewer: the list changed
        self.more = asyncio.Event()
        self.sent: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request.url.path.removeprefix("/agents/v2"))
        if request.url.path.endswith("/y"):
            return httpx.Response(200, json={"items": [], "page": 1, "total": 0})
        page = int(request.url.params["page"])
        if page > 1:
            await self.more.wait()
        ids = range((page - 1) * 100, min(page * 100, self.answered))
        body = {"items": [{"id": str(i)} for i in ids], "page": page, "total": self.total}
        return httpx.Response(200, json=body)


def test_deep_reads_start_as_their_page_arrives() -> None:
    async def go() -> tuple[list[Any], dict[str, Any], list[str]]:
        t = Paged(250)
        async with client(t) as api:
            reading = asyncio.create_task(
                api.list_and_read(
                    "/x",
                    lambda i: int(i["id"]) % 10 == 0,
                    lambda i: api.list_all(f"/x/{i['id']}/y"),
                )
            )
            while "/x/90/y" not in t.sent:  # page 1's deep reads, pages 2 and 3 unanswered
                await asyncio.sleep(0)
            assert sum(p.endswith("/y") for p in t.sent) == 10 and not reading.done()
            t.more.set()
            items, deep = await reading
            return items, deep, t.sent

    items, deep, sent = asyncio.run(go())
    assert len(items) == 250 and sorted(deep, key=int) == [str(i) for i in range(0, 250, 10)]
    assert all(v == [] for v in deep.values())
    assert sorted(sent) == sorted(["/x"] * 3 + [f"/x/{i}/y" for i in range(0, 250, 10)])


def test_a_list_that_changed_stops_its_deep_reads_with_the_read_error() -> None:
    from agentform.core.errors import ReadError

    async def go() -> None:
        t = Paged(250, answered=249)  # the last page is one short: the list changed
        t.more.set()
        async with client(t) as api:
            await api.list_and_read("/x", lambda i: True, lambda i: asyncio.sleep(3600))

    with pytest.raises(ReadError, match="the list changed"):
        asyncio.run(go())  # not an ExceptionGroup; the hour-long reads were cancelled


ORG_A = {"id": "0b7f3c1e-0000-4000-8000-00000000000a", "name": "alpha"}
ORG_B = {"id": "0b7f3c1e-0000-4000-8000-00000000000b", "name": "beta"}


@pytest.mark.parametrize(
    ("context", "wanted", "expected"),
    [
        ({"userId": "u", "email": "e", "organizations": [ORG_A]}, None, (ORG_A, False)),
        ({"organizationId": ORG_A["id"], "organizationName": "alpha"}, None, (ORG_A, False)),
        ({"organizations": [ORG_A, ORG_B]}, ORG_B["id"].upper(), (ORG_B, True)),
        ({"organizations": [ORG_A]}, ORG_A["id"], (ORG_A, False)),
    ],
)
def test_the_organization_comes_from_context(
    context: dict[str, Any], wanted: str | None, expected: tuple[dict[str, str], bool]
) -> None:
    from agentform.api.context import Organization, pick_organization

    org, must_name = pick_organization(context, wanted)
    assert (org, must_name) == (Organization(**expected[0]), expected[1])


@pytest.mark.parametrize(
    ("context", "wanted", "message"),
    [
        (
            {"organizations": [ORG_A, ORG_B]},
            None,
            "reaches 2 organizations: alpha (0b7f3c1e-0000-4000-8000-00000000000a), "
            "beta (0b7f3c1e-0000-4000-8000-00000000000b); choose one with organizationId",
        ),
        ({"organizations": [ORG_A, ORG_B]}, "c", "reaches the organizations alpha"),
        ({"organizations": [ORG_A]}, "c", "belongs to organization alpha"),
        ({"userId": "u"}, None, "names no organization"),
        ({"organizations": [{"name": "alpha"}]}, None, "organizations of an unexpected shape"),
        ({"organizations": {"id": "a"}}, None, "organizations of an unexpected shape"),
        ({"organizations": ["a"]}, None, "organizations of an unexpected shape"),
    ],
)
def test_an_ambiguous_or_wrong_organization_is_an_error(
    context: dict[str, Any], wanted: str | None, message: str
) -> None:
    from agentform.api.context import pick_organization
    from agentform.core.errors import AgentformError

    with pytest.raises(AgentformError, match=message.replace("(", r"\(").replace(")", r"\)")):
        pick_organization(context, wanted)


def test_a_scoped_client_names_the_organization_in_lists_and_creates() -> None:
    from agentform.api.context import resolve_organization

    page = {"items": [], "page": 1, "pageSize": 100, "total": 0}
    t = Scripted(
        [
            (200, {"organizations": [ORG_A, ORG_B]}, {}),
            (200, page, {}),
            *[(201, {"id": "1"}, {})] * 3,
        ]
    )

    async def nothing() -> None:
        return None

    async def go(api: ApiClient) -> str:
        org = await resolve_organization(api, ORG_B["id"])
        await api.list_all("/agent-profile-pools")
        await api.request("POST", "/agent-profile-pools", json={"name": "x"}, lookup=nothing)
        await api.request("POST", "/p", json={"name": "y", "organizationId": "z"}, lookup=nothing)
        await api.request("POST", "/agent-profile-pools/1/members", json={"profileIds": []})
        return org.name

    assert run(go, t) == "beta"
    assert t.requests[1].url.params["organizationId"] == ORG_B["id"]
    bodies = [json.loads(r.content) for r in t.requests[2:]]
    assert bodies == [
        {"name": "x", "organizationId": ORG_B["id"]},  # a create (it has a lookup)
        {"name": "y", "organizationId": "z"},
        {"profileIds": []},  # not a create
    ]


def test_an_unreachable_service_is_named_without_its_credentials() -> None:
    t = Scripted([httpx.ConnectError("refused")] * 4)
    api = ApiClient(
        "http://user:pa55word@127.0.0.1:9/agents/v2",
        "secret-key-123456",
        transport=t,
        retry=RetryPolicy(attempts=4),
        clock=InstantClock(),
    )
    with pytest.raises(ApiError) as caught:
        asyncio.run(api.request("GET", "/context"))
    message = str(caught.value)
    assert (
        "cannot reach the service at http://127.0.0.1:9/agents/v2 (ConnectError: refused)"
        in message
    )
    assert "pa55word" not in message and "user" not in message


def test_a_page_that_fails_stops_the_other_pages_of_its_list() -> None:
    """Page 2 of 4 is refused: the list's error is raised with the other pages'
    reads stopped, not left running (and holding slots) after the run failed."""

    async def go() -> tuple[int, list[int], object]:
        held = asyncio.Event()
        pages: list[int] = []

        class FourPages(httpx.AsyncBaseTransport):
            async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
                page = int(request.url.params["page"])
                pages.append(page)
                if page == 2:
                    return httpx.Response(403, json={"code": 403, "message": "no"})
                if page > 2:
                    await held.wait()  # never set: these answer only if left running
                items = [{"id": f"{page}-{i}"} for i in range(100)]
                return httpx.Response(200, json={"items": items, "total": 400})

        api = ApiClient("http://svc/agents/v2", "k", transport=FourPages(), clock=InstantClock())
        failed = (await asyncio.gather(api.list_all("/things"), return_exceptions=True))[0]
        return api.concurrency.in_flight, pages, failed  # as the error arrives

    in_flight, pages, failed = asyncio.run(go())
    assert isinstance(failed, ApiError) and "403 no" in str(failed)
    assert sorted(pages) == [1, 2, 3, 4]
    assert in_flight == 0  # pages 3 and 4 were stopped with the error


def test_an_item_listed_twice_stops_every_deep_read_with_the_read_error() -> None:
    """An item moved from page 1 to page 2 while the list was read (so listed twice):
    its two deep reads are both stopped with the read error, not one left running."""
    from agentform.core.errors import ReadError

    async def go() -> tuple[int, list[str]]:
        t = Paged(200)
        t.more.set()
        running: list[str] = []

        class Shifted(httpx.AsyncBaseTransport):
            async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
                response = await t.handle_async_request(request)
                body = response.json()
                if request.url.params["page"] == "2":
                    body["items"][0] = {"id": "99"}  # the last of page 1, again
                return httpx.Response(200, json=body)

        async def deep(item: dict[str, str]) -> None:
            running.append(item["id"])
            try:
                await asyncio.Event().wait()
            finally:
                running.remove(item["id"])

        async with client(Shifted()) as api:
            with pytest.raises(ReadError, match="the list changed"):
                await api.list_and_read("/x", lambda i: i["id"] == "99", deep)
            return api.concurrency.in_flight, list(running)

    in_flight, running = asyncio.run(go())
    assert running == [] and in_flight == 0


def test_a_body_that_cannot_be_decoded_is_an_api_error() -> None:
    """A proxy answering `Content-Encoding: gzip` with a body that is not gzip: the
    call fails with the client's error naming the call, not httpx's DecodingError."""

    class BadGzip(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            headers = {"content-encoding": "gzip", "content-type": "application/json"}
            return httpx.Response(200, headers=headers, stream=httpx.ByteStream(b"not gzip"))

    async def go() -> None:
        async with client(BadGzip()) as api:
            await api.request("GET", "/context")

    with pytest.raises(ApiError, match=r"^GET /context: the answer could not be decoded"):
        asyncio.run(go())


@pytest.mark.parametrize("body", [b'["denied"]', b'"denied"', b"null", b'{"message": null}'])
def test_an_error_answer_of_any_json_shape_is_an_api_error(body: bytes) -> None:
    """A gateway's error body need not be an object: the error still names the call
    and its status, with the status's reason."""

    class Odd(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            return httpx.Response(403, content=body, headers={"content-type": "application/json"})

    async def go() -> None:
        async with client(Odd()) as api:
            await api.request("GET", "/context")

    with pytest.raises(ApiError, match=r"^GET /context: 403 Forbidden$"):
        asyncio.run(go())


@pytest.mark.parametrize(
    ("body", "got"),
    [
        ({"results": []}, "an object without items and total"),
        ({"items": {"a": 1}, "total": 1}, "an object without items and total"),
        ({"items": [], "total": "0"}, "an object without items and total"),
        ("nothing", "a string"),
        ([1, 2], "items without id"),
        ({"items": [{"name": "x"}], "total": 1}, "items without id"),
    ],
)
def test_a_list_of_another_shape_is_a_clear_error(body: Any, got: str) -> None:
    """A 200 whose body is not a page (another API version, a gateway): the read
    fails naming the list and what came back, not with a KeyError."""
    from agentform.core.errors import UnexpectedAnswer

    class Other(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            return httpx.Response(200, json=body)

    async def go() -> None:
        async with client(Other()) as api:
            await api.list_all("/agent-profile-pools")

    expected = f"expected a page of items from GET /agent-profile-pools, got {got}"
    with pytest.raises(UnexpectedAnswer) as raised:
        asyncio.run(go())
    assert str(raised.value) == expected


@pytest.mark.parametrize(
    ("header", "wait"),
    [
        ("Fri, 31 Dec 2100 23:59:59 GMT", 5),  # an HTTP date far ahead: the cap
        ("Wed, 21 Oct 2015 07:28:00 GMT", 0),  # a date passed: at once
    ],
)
def test_retry_after_as_an_http_date_is_honoured(header: str, wait: float) -> None:
    """RFC 9110 allows Retry-After as a date as well as seconds."""
    waits: list[float] = []
    t = Scripted([(429, {"code": 429, "message": "x"}, {"Retry-After": header}), (200, {}, {})])
    run(lambda api: api.request("GET", "/x"), t, waits)
    assert waits == ([wait] if wait else [])
