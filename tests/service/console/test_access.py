"""Console access (docs/guide/console.md#security): signing in with an API key, the
session cookie, CSRF tokens, sign-out and expiry on the console's clock, the
security headers, and loopback only."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi import FastAPI

from agentform.service import create_app
from agentform.service.clock import ManualClock
from agentform.service.console.sessions import IDLE_SECONDS, SESSION_SECONDS
from agentform.service.http.binding import CONSOLE_ANY, CONSOLE_OFF
from agentform.service.settings import ServiceSettings
from agentform.service.store.organizations import revoke_key
from tests.service.conftest import ADMIN_KEY, READ_KEY, TEST_SEED
from tests.service.console.support import Console, csrf_of


def move(clock: ManualClock, seconds: float) -> None:
    asyncio.run(clock.advance(seconds))


@pytest.fixture
def session_clock() -> ManualClock:
    return ManualClock(start=datetime(2026, 1, 1, tzinfo=UTC))


@pytest.fixture
def app(tmp_path: Path, session_clock: ManualClock) -> Iterator[FastAPI]:
    application = create_app(
        tmp_path / "s.db", seed=TEST_SEED, settings=ServiceSettings(console_clock=session_clock)
    )
    yield application
    application.state.db.close()


def test_a_page_asks_to_sign_in_and_comes_back_after(app: FastAPI) -> None:
    console = Console(app)
    answer = console.get("/executions?status=failed")
    assert answer.status_code == 303
    assert (
        answer.headers["location"]
        == "/console/sign-in?next=%2Fconsole%2Fexecutions%3Fstatus%3Dfailed"
    )
    signed = console.sign_in(ADMIN_KEY, next_path="/console/executions?status=failed")
    assert signed.status_code == 303
    assert signed.headers["location"] == "/console/executions?status=failed"
    overview = console.get("/")
    assert overview.status_code == 200
    assert "acme" in overview.text and "Sign out" in overview.text


def test_the_session_cookie_is_httponly_strict_and_console_only(app: FastAPI) -> None:
    cookie = Console(app).sign_in(ADMIN_KEY).headers["set-cookie"]
    assert "agentform_console=" in cookie
    for attribute in ("HttpOnly", "SameSite=strict", "Path=/console"):
        assert attribute.lower() in cookie.lower(), cookie
    assert "secure" not in cookie.lower()  # plain http on loopback
    assert ADMIN_KEY not in cookie


def test_the_cookie_is_secure_under_https(app: FastAPI) -> None:
    console = Console(app, base_url="https://127.0.0.1")
    assert "secure" in console.sign_in(ADMIN_KEY).headers["set-cookie"].lower()


@pytest.mark.parametrize("key", ["not-a-key-at-all", "", "ключ-\"'\\-x", ADMIN_KEY + " x"])
def test_a_wrong_key_is_refused_without_being_shown(app: FastAPI, key: str) -> None:
    answer = Console(app).sign_in(key)
    assert answer.status_code == 401
    assert "not valid" in answer.text
    assert "agentform_console=" not in answer.headers.get("set-cookie", "")
    if key:
        assert key not in answer.text


def test_sign_in_without_the_forms_token_is_refused(app: FastAPI) -> None:
    console = Console(app)
    answer = console.post("/sign-in", {"csrf": "forged", "key": ADMIN_KEY})
    assert answer.status_code == 401 and "expired" in answer.text
    assert console.get("/").status_code == 303


@pytest.mark.parametrize(
    "target", ["//evil.example/", "https://evil.example/", "/console/\\\\evil"]
)
def test_signing_in_never_sends_the_browser_elsewhere(app: FastAPI, target: str) -> None:
    assert Console(app).sign_in(ADMIN_KEY, next_path=target).headers["location"] == "/console/"


def test_sign_out_ends_the_session(app: FastAPI) -> None:
    console = Console(app).signed_in(ADMIN_KEY)
    token = csrf_of(console.get("/").text)
    assert console.post("/sign-out", {"csrf": "forged"}).status_code == 403
    answer = console.post("/sign-out", {"csrf": token})
    assert answer.status_code == 303
    assert console.get("/").status_code == 303


def test_a_session_expires_when_idle_and_at_its_end(
    app: FastAPI, session_clock: ManualClock
) -> None:
    console = Console(app).signed_in(ADMIN_KEY)
    move(session_clock, IDLE_SECONDS - 1)
    assert console.get("/").status_code == 200  # used: its idle time starts again
    move(session_clock, IDLE_SECONDS + 1)
    assert console.get("/").status_code == 303
    console = Console(app).signed_in(ADMIN_KEY)
    for _ in range(SESSION_SECONDS // (IDLE_SECONDS - 60) + 1):
        move(session_clock, IDLE_SECONDS - 60)
        answer = console.get("/")
    assert answer.status_code == 303  # used all along, but at its end all the same


def test_a_revoked_key_ends_its_sessions(app: FastAPI) -> None:
    console = Console(app).signed_in(READ_KEY)
    assert console.get("/").status_code == 200
    with app.state.db.write() as conn:
        assert revoke_key(conn, str(TEST_SEED.organizations[0].id), "reader")
    assert console.get("/").status_code == 303


def test_every_answer_carries_the_security_headers(app: FastAPI) -> None:
    console = Console(app)
    for answer in (
        console.get("/sign-in"),
        console.signed_in(ADMIN_KEY).get("/"),
        console.get("/static/console.css"),
        console.get("/nothing-here"),
    ):
        csp = answer.headers["content-security-policy"]
        assert "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
        assert "script-src 'self'" in csp
        assert answer.headers["x-content-type-options"] == "nosniff"


def test_the_console_answers_loopback_only(app: FastAPI) -> None:
    remote = Console(app, client_address=("192.0.2.7", 4000))
    assert remote.get("/sign-in").status_code == 403
    rebound = Console(app, base_url="http://evil.example")
    answer = rebound.get("/sign-in")
    assert answer.status_code == 403 and "loopback host name" in answer.text
    for host in ("http://localhost:8080", "http://[::1]:9", "http://127.0.0.1:1"):
        assert Console(app, base_url=host).get("/sign-in").status_code == 200


def test_a_service_bound_elsewhere_answers_everywhere(tmp_path: Path) -> None:
    app = create_app(
        tmp_path / "a.db", seed=TEST_SEED, settings=ServiceSettings(console=CONSOLE_ANY)
    )
    assert (
        Console(app, base_url="http://10.0.0.5", client_address=("10.0.0.9", 1))
        .get("/sign-in")
        .status_code
        == 200
    )
    app.state.db.close()


def test_a_service_without_console_has_no_console(tmp_path: Path) -> None:
    app = create_app(
        tmp_path / "a.db", seed=TEST_SEED, settings=ServiceSettings(console=CONSOLE_OFF)
    )
    answer = Console(app).get("/sign-in")
    assert answer.status_code == 404
    app.state.db.close()


def test_only_the_consoles_own_files_are_served(app: FastAPI) -> None:
    console = Console(app)
    assert console.get("/static/console.js").headers["content-type"].startswith("text/javascript")
    for name in ("..%2F..%2Fpyproject.toml", "base.html", "console.css.map", "%2e%2e"):
        assert console.get(f"/static/{name}").status_code == 404, name


def test_the_sign_in_page_shows_a_hostile_next_as_text(app: FastAPI) -> None:
    page = Console(app).get('/sign-in?next=/console/"><script>alert(1)</script>').text
    assert "<script>alert(1)" not in page
    assert 'value="/console/&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"' in page
