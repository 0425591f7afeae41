"""A receiver's answer can carry a header value back: its first bytes are stored
with the attempt and shown to a read key, so every custom header value is taken out
before they are stored (service/delivery/scrub.py).

Before: a receiver echoing `X-Token` in its error body showed the secret in
`responseHead` (`GET /agentform/v1/webhook-deliveries`, `agentform webhook
deliveries`). The receiver here is in-process (an httpx MockTransport) so it can echo.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from agentform.service import create_app
from agentform.service.delivery.scrub import REDACTED, scrub
from agentform.service.runtime import ManualClock
from tests.service.conftest import ACME, READ_KEY, TEST_SEED, Api, running
from tests.service.test_delivery_fairness import SETTINGS, emit

TOKEN = 'tok-"quoted"\\back\\slash-7f3a'
BEARER = "Bearer s3cr3t-bearer-token-91"
ECHO: list[Callable[[httpx.Request], bytes]] = []


def _answer(request: httpx.Request) -> httpx.Response:
    return httpx.Response(401, stream=httpx.ByteStream(ECHO[0](request)))


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FastAPI, Api, Any]]:
    path = tmp_path_factory.mktemp("scrub") / "service.db"
    settings = SETTINGS.model_copy(update={"webhook_transport": httpx.MockTransport(_answer)})
    app = create_app(path, seed=TEST_SEED, clock=ManualClock(), settings=settings)
    with running(app) as (api, advance):
        yield app, api, advance
    app.state.db.close()


def _heads(service: tuple[FastAPI, Api, Any], echo: Callable[[httpx.Request], bytes]) -> str:
    """The stored heads of a failed delivery to an integration with the two secrets, as
    a read key sees them."""
    app, api, advance = service
    ECHO[:] = [echo]
    headers = {"X-Token": TOKEN, "Authorization": BEARER}
    name = uuid.uuid4().hex
    made = api.post(
        "/webhook-integrations",
        json={"name": name, "url": "https://hooks.example/h", "headers": headers},
    )
    hook = made.json()["id"]
    agent = api.ids("/agents")["checkout-agent"]
    api.request("PUT", f"/agents/{agent}/webhooks/{hook}", json={"eventRules": ["*"]})
    emit(app, ACME, agent, "EXECUTION_FAILED")
    for seconds in (0, 1, 2):
        advance(seconds)
    listed = api.client.get(
        "/agentform/v1/webhook-deliveries",
        params={"integrationId": hook},
        headers={"X-Api-Key": READ_KEY},
    ).json()["items"]
    heads = [attempt["responseHead"] for attempt in listed[0]["attempts"]]
    assert len(heads) == 3 and all(heads)
    return "\n".join(heads)


def _secrets_absent(text: str) -> None:
    for secret in (TOKEN, BEARER, "s3cr3t-bearer-token-91", json.dumps(TOKEN)[1:-1]):
        assert secret not in text, text
    assert "7f3a" not in text and "bearer-token" not in text


def test_a_header_echoed_verbatim_is_not_stored(service: tuple[FastAPI, Api, Any]) -> None:
    heads = _heads(service, lambda r: f"bad token {r.headers['x-token']}".encode())
    _secrets_absent(heads)
    assert heads.startswith(f"bad token {REDACTED}")


def test_headers_echoed_as_json_are_not_stored(service: tuple[FastAPI, Api, Any]) -> None:
    heads = _heads(service, lambda r: json.dumps({"got": dict(r.headers)}).encode())
    _secrets_absent(heads)
    assert f'"x-token": "{REDACTED}"' in heads


def test_the_token_of_a_scheme_echoed_alone_is_not_stored(
    service: tuple[FastAPI, Api, Any],
) -> None:
    heads = _heads(service, lambda r: b"unknown token: " + r.headers["authorization"][7:].encode())
    _secrets_absent(heads)


def test_a_value_cut_by_the_heads_end_is_not_stored_in_part(
    service: tuple[FastAPI, Api, Any],
) -> None:
    heads = _heads(service, lambda r: b"x" * 240 + r.headers["x-token"].encode())
    _secrets_absent(heads)
    assert heads.split("\n")[0].endswith("x" + REDACTED)


@pytest.mark.parametrize(
    ("secret", "echoed"),
    [
        ("clé-secrète-ü", "clé-secrète-ü"),
        ("clé-secrète-ü", json.dumps("clé-secrète-ü")[1:-1]),  # \\u00e9 ...
        ('a"b\\c-secret', json.dumps('a"b\\c-secret')[1:-1]),
        ("a b+c/d=secret", "a%20b%2Bc%2Fd%3Dsecret"),
        ("<tok&en>", "&lt;tok&amp;en&gt;"),
    ],
)
def test_every_form_a_receiver_may_echo_is_taken_out(secret: str, echoed: str) -> None:
    assert scrub(f"[{echoed}]", [secret]) == f"[{REDACTED}]"


def test_short_values_and_other_text_are_left() -> None:
    assert scrub("on and on", ["on"]) == "on and on"
    assert scrub("all good", ["secret-value"]) == "all good"
