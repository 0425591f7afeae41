"""Properties of the client's retries and pacing over random runs: many requests at
once, each meeting a random sequence of answers (200, 404, 429, 5xx, a connection
refused, a timeout after sending). Whatever happens:

- a create is sent again only when the service provably did not process the
  previous attempt (429, connection never made), or when its lookup showed that
  nothing was made; a lookup that finds the object is the create's answer;
- no request is sent more often than its attempts and 429s in a row allow;
- when the run ends, no slot is held, nobody waits, the window is within bounds.
Time is a fake clock."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from agentform.api.client import ApiClient
from agentform.api.retries import RetryPolicy
from agentform.core.errors import ApiError
from tests.clock import InstantClock
from tests.tiers import examples

CEILING = 4
POLICY = RetryPolicy(attempts=3, throttled_attempts=4)
OUTCOMES = [200, 404, 429, 500, 502, 503, "refused", "timeout"]
NOT_PROCESSED = (429, "refused")  # the service never acted on the attempt


@dataclass
class Call:
    method: str
    outcomes: list[Any]  # what each attempt meets (then 200)
    lookup_finds: bool | None  # for a create: None when it has no lookup
    met: list[Any] = field(default_factory=list)
    lookups: list[int] = field(default_factory=list)  # attempts seen when each ran


calls = st.builds(
    Call,
    method=st.sampled_from(["GET", "PUT", "DELETE", "POST"]),
    outcomes=st.lists(st.sampled_from(OUTCOMES), max_size=6),
    lookup_finds=st.none() | st.booleans(),
)


class Scripted(httpx.AsyncBaseTransport):
    def __init__(self, by_path: dict[str, Call]) -> None:
        self.by_path = by_path

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        call = self.by_path[request.url.path.rsplit("/", 1)[1]]
        attempt = len(call.met)
        outcome = call.outcomes[attempt] if attempt < len(call.outcomes) else 200
        call.met.append(outcome)
        await asyncio.sleep(0)
        if outcome == "refused":
            raise httpx.ConnectError("refused", request=request)
        if outcome == "timeout":
            raise httpx.ReadTimeout("no answer", request=request)
        headers = {"Retry-After": "1"} if outcome in (429, 503) and attempt % 2 else {}
        body = {"code": outcome, "message": "scripted"} if outcome >= 400 else {"id": "made"}
        return httpx.Response(outcome, json=body, headers=headers)


async def run(plan: list[Call]) -> ApiClient:
    by_path = {str(i): call for i, call in enumerate(plan)}
    api = ApiClient(
        "http://svc/agents/v2",
        "k",
        transport=Scripted(by_path),
        retry=POLICY,
        concurrency=CEILING,
        clock=InstantClock(),
    )

    async def one(name: str, call: Call) -> Any:
        lookup = None
        if call.method == "POST" and call.lookup_finds is not None:

            async def lookup() -> Any:
                call.lookups.append(len(call.met))
                return {"id": "found"} if call.lookup_finds else None

        try:
            return await api.request(call.method, f"/r/{name}", json={}, lookup=lookup)
        except ApiError:
            return None

    async with api:
        await asyncio.gather(*(one(name, call) for name, call in by_path.items()))
    return api


@settings(max_examples=examples(200), deadline=None)
@given(plan=st.lists(calls, min_size=1, max_size=12))
def test_no_create_is_sent_again_blindly_and_nothing_is_left_held(plan: list[Call]) -> None:
    api = asyncio.run(run(plan))
    assert api.concurrency.in_flight == 0 and not api.concurrency.waiters
    assert 1 <= api.concurrency.window <= CEILING
    assert api.sent == sum(len(call.met) for call in plan)
    for call in plan:
        failures = [o for o in call.met if o not in (200, 404, 429)]
        assert len(failures) <= POLICY.attempts
        assert len(call.met) <= POLICY.attempts + POLICY.throttled_attempts * POLICY.attempts
        if call.method != "POST":
            continue
        for attempt, outcome in enumerate(call.met[:-1], start=1):
            # sent again after `outcome`: only if not processed, or looked up in vain
            looked = attempt in call.lookups
            assert outcome in NOT_PROCESSED or (looked and not call.lookup_finds), call
        if call.lookup_finds and call.lookups:
            assert call.lookups[-1] == len(call.met)  # found: nothing sent after it
