"""The hint about an endpoint's base path follows a 404 only when the server does not
serve the path (found by the trial: it followed the service's own 404 about a missing
execution, suggesting `.../agentform/v1/agents/v2` for a right endpoint)."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import httpx
import pytest

from agentform.api.answers import error_text
from agentform.api.connect import Endpoint, connect
from agentform.core.errors import ApiError
from agentform.core.sensitive import Sensitive
from agentform.rules.paths import UNKNOWN_PATH

ROOT = "http://127.0.0.1:8700"
HINT = (
    " (the endpoint is the service's base URL, which ends in /agents/v2: "
    f"did you mean {ROOT}/agents/v2?)"
)


def answer(status: int, body: Any = None, text: str = "") -> httpx.Response:
    if body is not None:
        return httpx.Response(status, json=body)
    return httpx.Response(status, text=text, headers={"content-type": "text/html"})


@pytest.mark.parametrize(
    ("endpoint", "response", "hint"),
    [
        (ROOT, answer(404, {"code": 404, "message": UNKNOWN_PATH}), HINT),
        (f"{ROOT}/agents/v1", answer(404, {"code": 404, "message": UNKNOWN_PATH}), HINT),
        (ROOT, answer(404, text="<html>Not Found</html>"), HINT),
        (ROOT, answer(404, {"detail": "Not Found"}), HINT),
        (
            ROOT,
            answer(404, {"code": 404, "message": "no execution 'nope' in this organization"}),
            "",
        ),
        (f"{ROOT}/agents/v2", answer(404, {"code": 404, "message": UNKNOWN_PATH}), ""),
        (ROOT, answer(403, {"code": 403, "message": "this API key may only read"}), ""),
    ],
    ids=[
        "the service at its root",
        "another version",
        "a web server's page",
        "another server's JSON",
        "the service's 404 about a missing object",
        "a right endpoint",
        "not a 404",
    ],
)
def test_the_hint_only_for_a_path_not_served(
    endpoint: str, response: httpx.Response, hint: str
) -> None:
    said = error_text(response, endpoint)
    assert said.endswith(hint) if hint else "did you mean" not in said


class Counted(httpx.Response):
    """An answer that counts how often its body is parsed as JSON."""

    parsed: ClassVar[list[int]] = []

    def json(self, **kwargs: Any) -> Any:
        self.parsed.append(self.status_code)
        return super().json(**kwargs)


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"code": 404, "message": UNKNOWN_PATH}, UNKNOWN_PATH + HINT),
        ({"code": 404, "message": "no agent 'ü \"a\\\\b'"}, "no agent 'ü \"a\\\\b'"),
    ],
)
def test_an_error_answer_is_parsed_once(body: dict[str, Any], said: str) -> None:
    """The client reads a 404's body for its message and for the hint once, not once
    each (and names the endpoint without its credentials once, as it was given)."""
    Counted.parsed.clear()
    transport = httpx.MockTransport(lambda request: Counted(404, json=body))

    async def call() -> None:
        async with connect(
            Endpoint(ROOT, Sensitive("key")), transport=transport, base_url=ROOT
        ) as api:
            await api.request("GET", "/agents")

    with pytest.raises(ApiError) as caught:
        asyncio.run(call())
    assert str(caught.value) == f"GET /agents: 404 {said}"
    assert Counted.parsed == [404]
