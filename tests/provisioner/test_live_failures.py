"""A live read that fails or is stopped part-way, /context and lists together: the
error is the right one and said once, what was under way is stopped, nothing is
left behind (no slot held, no "exception was never retrieved" from asyncio).

A scripted service that can hold /context back for a number of event-loop turns,
answer it (or a list) with a chosen failure, or hold every list until the test
lets it go."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from agentform.api.client import ApiClient
from agentform.api.retries import RetryPolicy
from agentform.config.loader import load_workspace
from agentform.core.errors import ApiError, UnexpectedAnswer
from agentform.engine.planner import make_plan
from agentform.service import DEMO_ADMIN_KEY
from tests.clock import InstantClock
from tests.provisioner.harness import BASE_URL, write_workspace

Answer = tuple[int, str, bytes]  # status, content type, body
WORKSPACE = {
    "agentform.yaml": "workspace: w\n",
    "pools.yaml": "profilePools:\n  - {name: p, members: [bot-1]}\n",
    "groups.yaml": "profileGroups:\n  - {name: g, members: [bot-2]}\n",
}


ORGANIZATION = {"id": "0b7f3c1e-0000-4000-8000-000000000001", "name": "acme"}


class Scripted(httpx.AsyncBaseTransport):
    """A service with one organization and nothing in it, except where `answers(path)`
    gives an answer of its own; /context is answered after `context_turns` turns of
    the loop; with `hold_lists`, every other request without an answer of its own
    waits for `release` (so a test can stop the run mid-read). No app behind it:
    nothing else keeps the run's objects alive, so what asyncio would report is
    reported when the test collects."""

    def __init__(
        self,
        answers: Callable[[str], Answer | None] = lambda path: None,
        context_turns: int = 50,
        hold_lists: bool = False,
    ) -> None:
        self.answers = answers
        self.context_turns = context_turns
        self.release = asyncio.Event() if hold_lists else None
        self.events: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path.removeprefix("/agents/v2")
        self.events.append(f"sent {path}")
        if path == "/context":
            for _ in range(self.context_turns):
                await asyncio.sleep(0)
        answer = self.answers(path)
        if path != "/context" and answer is None and self.release is not None:
            await self.release.wait()
        if path == "/context":
            self.events.append("answered /context")
        if answer is None:
            body = {"organizations": [ORGANIZATION]} if path == "/context" else EMPTY_PAGE
            answer = 200, "application/json", json.dumps(body).encode()
        status, media, content = answer
        return httpx.Response(status, headers={"content-type": media}, content=content)


EMPTY_PAGE = {"items": [], "total": 0, "page": 1, "pageSize": 100}


def error(status: int, message: str) -> Answer:
    return status, "application/json", json.dumps({"code": status, "message": message}).encode()


Reports = Callable[[], list[str]]


@pytest.fixture
def unretrieved(caplog: pytest.LogCaptureFixture) -> Iterator[Reports]:
    """What asyncio logged (a future or task whose exception nobody retrieved is
    reported when it is collected, so this collects first)."""

    def reports() -> list[str]:
        gc.collect()
        return [r.getMessage() for r in caplog.records if r.name == "asyncio"]

    gc.collect()  # what earlier tests left is theirs
    with caplog.at_level(logging.WARNING, logger="asyncio"):
        yield reports


def plan_with(root: Path, transport: Scripted) -> tuple[ApiClient, type[BaseException], str]:
    """Plans through `transport`: the client (closed), and the error's type and text
    (not the error itself: its traceback would keep alive what the test looks for)."""
    workspace = load_workspace(root)
    api = ApiClient(
        BASE_URL,
        DEMO_ADMIN_KEY,
        transport=transport,
        retry=RetryPolicy(attempts=2),
        clock=InstantClock(),
    )

    async def go() -> None:
        async with api:
            await make_plan(workspace, api, "test")

    try:
        asyncio.run(go())
    except Exception as exc:
        return api, type(exc), str(exc)
    raise AssertionError("the plan did not fail")


def assert_nothing_left(api: ApiClient, reports: Reports) -> None:
    assert reports() == []
    assert api.concurrency.in_flight == 0 and not api.concurrency.waiters


@pytest.mark.parametrize(
    ("context", "expected", "message"),
    [
        (error(401, "invalid API key"), ApiError, "GET /context: 401 invalid API key"),
        (
            (200, "text/html", b"<html>sign in</html>"),
            UnexpectedAnswer,
            r"expected JSON from GET \S+/context, got text/html",
        ),
        (
            (200, "application/json", b"{not json"),
            UnexpectedAnswer,
            r"expected JSON from GET \S+/context, got a body that is not JSON",
        ),
    ],
)
@pytest.mark.parametrize("lists", [401, 500])
def test_a_failed_context_is_the_error_even_when_lists_failed_first(
    ws: Path,
    unretrieved: Reports,
    context: Answer,
    expected: type[Exception],
    message: str,
    lists: int,
) -> None:
    write_workspace(ws, WORKSPACE)

    def answers(path: str) -> Answer | None:
        if path == "/context":
            return context
        return error(lists, "the lists failed") if path != "/profiles" else None

    transport = Scripted(answers, context_turns=200)
    api, raised, text = plan_with(ws, transport)
    assert issubclass(raised, expected) and re.fullmatch(message, text), text
    assert transport.events.index("answered /context") > transport.events.index(
        "sent /agent-profile-pools"
    )  # the lists went out (and failed) before /context answered
    assert_nothing_left(api, unretrieved)


@pytest.mark.parametrize(("status", "message"), [(401, "invalid API key"), (500, "it broke")])
def test_a_list_that_fails_while_context_succeeds_is_the_error(
    ws: Path, unretrieved: Reports, status: int, message: str
) -> None:
    write_workspace(ws, WORKSPACE)

    def answers(path: str) -> Answer | None:
        return error(status, message) if path == "/profile-groups" else None

    api, raised, text = plan_with(ws, Scripted(answers, context_turns=0))
    assert raised is ApiError and text == f"GET /profile-groups: {status} {message}"
    assert_nothing_left(api, unretrieved)


def test_a_plan_stopped_mid_read_leaves_nothing_under_way(ws: Path, unretrieved: Reports) -> None:
    """Ctrl-C during the reads: asyncio.run cancels the plan's task (as the CLI's
    signal handling does); every read under way stops and gives its slot back."""
    write_workspace(ws, WORKSPACE)

    async def go() -> tuple[ApiClient, Scripted]:
        transport = Scripted(context_turns=0, hold_lists=True)
        api = ApiClient(BASE_URL, DEMO_ADMIN_KEY, transport=transport, clock=InstantClock())
        planning = asyncio.create_task(make_plan(load_workspace(ws), api, "test"))
        while api.concurrency.in_flight < 3:
            await asyncio.sleep(0)
        planning.cancel()
        with pytest.raises(asyncio.CancelledError):
            await planning
        await api.aclose()
        return api, transport

    api, transport = asyncio.run(go())
    assert "answered /context" in transport.events
    assert_nothing_left(api, unretrieved)


def test_an_error_in_the_reads_is_raised_once_with_no_warning(
    ws: Path, unretrieved: Reports
) -> None:
    """Two lists fail: the first kind's error is the run's, the other is not left
    for asyncio to report."""
    write_workspace(ws, WORKSPACE)

    def answers(path: str) -> Answer | None:
        if path in ("/agent-profile-pools", "/profile-groups"):
            return error(403, f"no access to {path}")
        return None

    api, raised, text = plan_with(ws, Scripted(answers, context_turns=0))
    assert raised is ApiError and re.fullmatch(r"GET (\S+): 403 no access to \1", text), text
    assert_nothing_left(api, unretrieved)


def test_a_list_that_fails_stops_the_reads_still_under_way(ws: Path, unretrieved: Reports) -> None:
    """/context answered, one list refused while the others are still being read:
    the run fails at once with that error, the other reads stopped (they would
    otherwise be waited for to the end, deep reads and all, for nothing)."""
    write_workspace(ws, WORKSPACE)

    def answers(path: str) -> Answer | None:
        return error(403, "no access") if path == "/profile-groups" else None

    async def go() -> tuple[ApiClient, str]:
        transport = Scripted(answers, context_turns=0, hold_lists=True)  # never released
        api = ApiClient(BASE_URL, DEMO_ADMIN_KEY, transport=transport, clock=InstantClock())
        planning = asyncio.create_task(make_plan(load_workspace(ws), api, "test"))
        for _ in range(500):
            await asyncio.sleep(0)
            if planning.done():
                break
        assert planning.done(), "the plan still waits for the other lists"
        text = str(planning.exception())
        await api.aclose()
        return api, text

    api, text = asyncio.run(go())
    assert text == "GET /profile-groups: 403 no access"
    assert_nothing_left(api, unretrieved)


class Stalling:
    """A client whose lists answer from `listed`, fail for paths ending in /fail/...,
    and never answer otherwise (recording the reads stopped while waiting)."""

    def __init__(self, listed: dict[str, list[dict[str, str]]]) -> None:
        self.listed = listed
        self.stopped: list[str] = []

    async def list_all(self, path: str, *args: object, **kwargs: object) -> list[dict[str, str]]:
        if path in self.listed:
            return self.listed[path]
        if "/fail/" in path or path.endswith("/fail"):
            raise ApiError("GET", path, 403, "no access")
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.stopped.append(path)
            raise
        raise AssertionError("never answered")


def pending(batch_id: str) -> dict[str, str]:
    return {"id": batch_id, "name": batch_id, "agentId": "a", "status": "pending"}


@pytest.mark.parametrize(
    ("kind", "listed", "parents", "hanging"),
    [
        (
            "webhookAttachments",
            {},
            ["slow", "fail"],
            "/webhook-integrations/slow/attachments",
        ),
        (
            "batches",
            {"/execution-batches": [pending("slow"), pending("fail")], "/agents": []},
            [],
            "/execution-batches/slow/items",
        ),
    ],
)
def test_a_deep_read_that_fails_stops_its_siblings(
    kind: str, listed: dict[str, list[dict[str, str]]], parents: list[str], hanging: str
) -> None:
    """One of a kind's deep reads (a webhook's attachments, a batch's items) fails:
    the others of that kind are stopped with it, not left reading after the run
    has failed."""
    from agentform.engine.live import Everything
    from agentform.kinds import Kind
    from agentform.kinds.context import LiveRead
    from agentform.kinds.keys import Key
    from agentform.kinds.model import LiveObject
    from agentform.kinds.references import References

    async def go() -> list[str]:
        api = Stalling(listed)
        live = {Key(p): LiveObject(Key(p), p, {}, {}) for p in parents}  # type: ignore[arg-type]
        read = LiveRead(api, Everything(), References(api), live)
        with pytest.raises(ApiError, match="403 no access"):
            await Kind.registry[kind].read_live(read)
        return list(api.stopped)  # as the error arrives (asyncio.run stops the rest)

    assert asyncio.run(go()) == [hanging]
